import Metrics
import Strata
import Synchronization

/// Exports instrumented levels' statistics (``LevelStatistics``, from
/// `level.instrumented(name:)`) to swift-metrics, so a Prometheus, StatsD or
/// OpenTelemetry backend shows them.
///
/// Per level, with the dimension `level` (the statistics' name) and any you
/// add: counters `<prefix>_gets_total`, `_hits_total`, `_misses_total`,
/// `_errors_total`, `_sets_total`, `_set_errors_total`, `_removes_total`,
/// `_invalidations_total`, `_backfills_total`, `_backfill_failures_total`,
/// `_evictions_total`, `_admissions_rejected_total`; gauges `<prefix>_entries`
/// and `<prefix>_bytes` (when you say how to read them); and the timer
/// `<prefix>_get_duration_seconds`, fed with the gets the level times (1 in
/// 16 by default, each at its latency bucket's lower bound: up to ~19% low).
///
/// It reads snapshots and reports what changed since the last ``report()``:
/// the levels' hit paths pay nothing for it. Call ``report()`` before each
/// scrape, or ``run(every:)`` in a task (a `ServiceGroup` service: it ends
/// when cancelled).
public final class StrataMetricsExporter: Sendable {
    /// One level to export.
    public struct Level: Sendable {
        public let statistics: LevelStatistics
        public let entries: (@Sendable () -> Int)?
        public let bytes: (@Sendable () -> Int)?

        /// - Parameters:
        ///   - entries: how many entries the level holds now (`{ memory.count }`).
        ///   - bytes: how many bytes (`{ memory.totalCost }`, `{ disk.totalSize }`).
        public init(_ statistics: LevelStatistics, entries: (@Sendable () -> Int)? = nil, bytes: (@Sendable () -> Int)? = nil) {
            self.statistics = statistics
            self.entries = entries
            self.bytes = bytes
        }
    }

    private struct Meters: @unchecked Sendable {
        // Safe: swift-metrics' Counter, Gauge and Timer are classes whose
        // handlers the backends make thread-safe (the API's own contract);
        // this struct only holds them, never mutated after init.
        let counters: [(name: String, read: @Sendable (StatisticsSnapshot) -> Int, counter: Counter)]
        let entries: Gauge?
        let bytes: Gauge?
        let getDuration: Metrics.Timer
    }

    private struct Last {
        var snapshot: StatisticsSnapshot
        var latency: LatencySnapshot
        var resets: Int
    }

    private let levels: [(level: Level, meters: Meters)]
    private let last: Mutex<[Last]>

    /// - Parameters:
    ///   - prefix: the start of every metric's name.
    ///   - dimensions: added to every metric, after `level`.
    ///   - factory: the backend (default: the one `MetricsSystem.bootstrap` installed).
    public init(levels: [Level], prefix: String = "strata", dimensions: [(String, String)] = [],
                factory: any MetricsFactory = MetricsSystem.factory) {
        self.levels = levels.map { level in
            let labels = [("level", level.statistics.name)] + dimensions
            func counter(_ name: String, _ read: @escaping @Sendable (StatisticsSnapshot) -> Int) -> (String, @Sendable (StatisticsSnapshot) -> Int, Counter) {
                (name, read, Counter(label: "\(prefix)_\(name)_total", dimensions: labels, factory: factory))
            }
            let meters = Meters(
                counters: [
                    counter("gets") { $0.gets }, counter("hits") { $0.hits }, counter("misses") { $0.misses },
                    counter("errors") { $0.errors }, counter("sets") { $0.sets }, counter("set_errors") { $0.setErrors },
                    counter("removes") { $0.removes }, counter("invalidations") { $0.invalidations },
                    counter("backfills") { $0.backfills }, counter("backfill_failures") { $0.backfillFailures },
                    counter("evictions") { $0.levelCounters?["evictions"] ?? 0 },
                    counter("admissions_rejected") { $0.levelCounters?["admissionsRejected"] ?? 0 },
                ],
                entries: level.entries.map { _ in Gauge(label: "\(prefix)_entries", dimensions: labels, factory: factory) },
                bytes: level.bytes.map { _ in Gauge(label: "\(prefix)_bytes", dimensions: labels, factory: factory) },
                getDuration: Metrics.Timer(label: "\(prefix)_get_duration_seconds", dimensions: labels, factory: factory))
            return (level, meters)
        }
        last = Mutex(levels.map { level in
            let now = level.statistics.snapshotWithResets()
            return Last(snapshot: now.snapshot, latency: now.latency, resets: now.resets)
        })
    }

    /// Every instrumented level inside `stack` (``CacheLevel/levelStatistics``),
    /// without entry or byte gauges.
    public convenience init(stack: some CacheLevel, prefix: String = "strata", dimensions: [(String, String)] = [],
                            factory: any MetricsFactory = MetricsSystem.factory) {
        self.init(levels: stack.levelStatistics.map { Level($0) }, prefix: prefix, dimensions: dimensions, factory: factory)
    }

    /// Reports each level's counts since the last report (the first: since
    /// the exporter was made), its gauges now, and the gets it timed.
    public func report() {
        // Snapshots taken and compared under the lock: two reports at once
        // must not compare an older snapshot with a newer one.
        last.withLock { last in
            for (index, (level, meters)) in levels.enumerated() {
                let now = level.statistics.snapshotWithResets()
                // Reset since the last report: everything now is new.
                let restarted = now.resets != last[index].resets
                let before = restarted ? StatisticsSnapshot() : last[index].snapshot
                for (_, read, counter) in meters.counters {
                    counter.increment(by: max(0, read(now.snapshot) - read(before)))
                }
                if let entries = level.entries { meters.entries?.record(entries()) }
                if let bytes = level.bytes { meters.bytes?.record(bytes()) }
                let timed = restarted ? now.latency : now.latency.minus(last[index].latency)
                for (lowerBound, count) in timed.buckets(perGroup: 1) {
                    for _ in 0..<count { meters.getDuration.recordNanoseconds(Int64(clamping: lowerBound)) }
                }
                last[index] = Last(snapshot: now.snapshot, latency: now.latency, resets: now.resets)
            }
        }
    }

    /// Reports every `interval` until the task is cancelled.
    public func run(every interval: Duration = .seconds(10)) async {
        while !Task.isCancelled {
            report()
            try? await Task.sleep(for: interval)
        }
        report()
    }
}
