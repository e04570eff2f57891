import Synchronization

/// A lock-free log-linear latency histogram: four buckets per power of two of
/// nanoseconds (≤ 19% relative error), from 1 ns to about 18 minutes.
/// Recording is one relaxed atomic add; reading never blocks writers.
public final class LatencyHistogram: Sendable {
    static let subBuckets = 4
    static let bucketCount = 41 * 4
    private let buckets: InlineArray<164, Atomic<UInt64>>

    /// An empty histogram.
    public init() {
        buckets = InlineArray { _ in Atomic(0) }
    }

    static func bucket(for nanoseconds: UInt64) -> Int {
        let value = max(nanoseconds, 1)
        let msb = 63 - value.leadingZeroBitCount
        if msb < 2 { return Int(value) }  // 1..3 exactly
        let sub = Int((value >> UInt64(msb - 2)) & 3)
        return min(msb * subBuckets + sub, bucketCount - 1)
    }

    /// The smallest value that lands in bucket `index`.
    static func lowerBound(of index: Int) -> UInt64 {
        if index < 4 { return UInt64(index) }
        // 4...7 hold nothing (4 ns and up land from 8 on); they start at 4.
        if index < 8 { return 4 }
        let msb = index / subBuckets, sub = index % subBuckets
        return (UInt64(4 + sub)) << UInt64(msb - 2)
    }

    /// Records one observation.
    public func record(nanoseconds: UInt64) {
        buckets[Self.bucket(for: nanoseconds)].add(1, ordering: .relaxed)
    }

    /// Records one observation of `duration` (negative durations as zero).
    public func record(_ duration: Duration) {
        record(nanoseconds: UInt64(clamping: max(duration.nanoseconds, 0)))
    }

    /// Forgets everything recorded.
    public func reset() {
        for i in buckets.indices { buckets[i].store(0, ordering: .relaxed) }
    }

    /// A copy of the counts, for percentiles.
    public func snapshot() -> LatencySnapshot {
        var counts = [UInt64](repeating: 0, count: Self.bucketCount)
        for i in buckets.indices { counts[i] = buckets[i].load(ordering: .relaxed) }
        return LatencySnapshot(counts: counts)
    }
}

/// Bucket counts of a ``LatencyHistogram`` at one moment.
public struct LatencySnapshot: Sendable, Equatable {
    /// Observations per bucket (``LatencyHistogram``'s log-linear buckets).
    public let counts: [UInt64]

    /// A snapshot of these bucket counts, one per ``LatencyHistogram`` bucket
    /// (as ``LatencyHistogram/snapshot()`` makes them).
    public init(counts: [UInt64]) {
        self.counts = counts
    }

    /// The number of observations.
    public var total: UInt64 { counts.reduce(0, +) }

    /// The observations recorded between `earlier` and this snapshot (of the
    /// same histogram), for percentiles over a window. After a reset in
    /// between (a bucket went down), everything since the reset: this snapshot.
    public func minus(_ earlier: LatencySnapshot) -> LatencySnapshot {
        guard earlier.counts.count == counts.count,
              zip(counts, earlier.counts).allSatisfy({ $0 >= $1 }) else { return self }  // reset in between
        return LatencySnapshot(counts: zip(counts, earlier.counts).map { $0 - $1 })
    }

    /// The buckets that hold observations, as (lower bound in nanoseconds,
    /// count), smallest first; neighbouring buckets are merged `perGroup` at a
    /// time (4 makes one group per power of two).
    public func buckets(perGroup: Int = 4) -> [(lowerBound: UInt64, count: UInt64)] {
        let group = max(1, perGroup)
        var result: [(lowerBound: UInt64, count: UInt64)] = []
        var index = 0
        while index < counts.count {
            let end = min(counts.count, (index / group + 1) * group)
            let sum = counts[index..<end].reduce(0, +)
            if sum > 0 { result.append((LatencyHistogram.lowerBound(of: index), sum)) }
            index = end
        }
        return result
    }

    /// The latency below which `fraction` (0...1) of observations fall, as the
    /// midpoint of its bucket, in nanoseconds; `nil` when nothing was recorded.
    public func percentile(_ fraction: Double) -> UInt64? {
        let total = self.total
        guard total > 0 else { return nil }
        let rank = UInt64((Double(total) * min(max(fraction, 0), 1)).rounded(.up))
        var seen: UInt64 = 0
        for (index, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= max(rank, 1) {
                let low = LatencyHistogram.lowerBound(of: index)
                let high = index + 1 < counts.count ? LatencyHistogram.lowerBound(of: index + 1) : low
                return (low + high) / 2
            }
        }
        return nil
    }
}
