#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The counters and the get-latency histogram of one instrumented level
/// (Caffeine's `StatsCounter`), kept apart from its events
/// (``CacheEventBus``).
///
/// - **Striped**: counts go to one of 16 padded stripes chosen by the
///   calling thread, so threads on different cores do not write one cache
///   line; every add is atomic, so counts are exact. ``snapshot()`` sums.
/// - **Level counters**: the level's own counters (``LevelCounterReporting``)
///   are read at snapshot time, counted from the last ``reset()``; only the
///   non-zero ones appear, and ``StatisticsSnapshot/levelCounters`` is `nil`
///   when there are none.
/// - **Sampled latency**: one get in ``latencySampleRate`` (at random) is
///   timed into the histogram; percentiles from the sample stay within a few
///   percent of timing every get, while the clock is read 1/16 as often.
///   Gets whose events someone watches (observers, a ``RequestTrace``, trace
///   logging) are always timed.
public final class StatisticsCounter: Sendable {
    @usableFromInline static var stripeCount: Int { 16 }
    /// log2 of ``latencySampleRate``.
    @usableFromInline let sampleShift: UInt64
    @usableFromInline let stripes: [CounterStripe]
    /// Latency of the timed gets.
    public let getLatency = LatencyHistogram()
    let levelCounters: (@Sendable () -> [String: Int])?
    /// The level's own counters at the last ``reset()``.
    private let levelBaseline = Mutex<[String: Int]>([:])

    /// One get in this many is timed (a power of two; 1 times every get).
    public var latencySampleRate: Int { 1 << Int(sampleShift) }

    /// Counters timing one get in `latencySampleRate` (rounded up to a power
    /// of two), with `levelCounters` read at snapshot time.
    public init(latencySampleRate: Int = 16, levelCounters: (@Sendable () -> [String: Int])? = nil) {
        let rate = max(1, latencySampleRate)
        sampleShift = UInt64((rate - 1).bitWidth - (rate - 1).leadingZeroBitCount)
        stripes = (0..<Self.stripeCount).map { CounterStripe(seed: 0x9E37_79B9_7F4A_7C15 &* UInt64($0 + 1)) }
        self.levelCounters = levelCounters
    }

    /// The calling thread's stripe.
    @inlinable var stripe: CounterStripe {
        #if canImport(Darwin)
        let thread = UInt64(UInt(bitPattern: pthread_self()))
        #else
        let thread = UInt64(pthread_self())
        #endif
        return stripes[Int(truncatingIfNeeded: (thread &* 0x9E37_79B9_7F4A_7C15) >> 60)]
    }

    /// The counters now, summed over the stripes, with percentiles and the
    /// level's own counters.
    public func snapshot() -> StatisticsSnapshot {
        var s = StatisticsSnapshot()
        for stripe in stripes { stripe.add(into: &s) }
        let latency = getLatency.snapshot()
        s.getP50 = latency.percentile(0.5)
        s.getP99 = latency.percentile(0.99)
        if let current = levelCounters?() {
            let baseline = levelBaseline.withLock { $0 }
            let since = current
                .reduce(into: [String: Int]()) { result, entry in
                    let delta = entry.value - (baseline[entry.key] ?? 0)
                    if delta != 0 { result[entry.key] = delta }
                }
            s.levelCounters = since.isEmpty ? nil : since
        }
        return s
    }

    /// Sets every counter back to zero; the level's own counters count from
    /// now on too.
    public func reset() {
        for stripe in stripes { stripe.reset() }
        getLatency.reset()
        if let current = levelCounters?() { levelBaseline.withLock { $0 = current } }
    }
}
