/// The counters of one instrumented level at one moment: a value, so two
/// snapshots can be compared and subtracted (``minus(_:)``).
public struct StatisticsSnapshot: Sendable, Equatable, Codable {
    /// Gets that finished: hits, misses, errors and cancelled gets.
    public var gets = 0
    public var hits = 0
    public var misses = 0
    /// Gets that failed (cancelled gets are not errors).
    public var errors = 0
    public var sets = 0
    /// Sets that failed (back-fills that failed are ``backfillFailures``).
    public var setErrors = 0
    public var removes = 0
    /// Removes that failed (counted apart from get errors, so they do not
    /// lower the hit ratio).
    public var removeErrors = 0
    public var clears = 0
    public var memoryWarnings = 0
    public var backfills = 0
    public var backfillFailures = 0
    /// Get latency percentiles in nanoseconds (`nil` before the first timed get).
    public var getP50: UInt64?
    public var getP99: UInt64?
    /// Counters the level itself keeps, by name (for example the memory
    /// level's `evictions`), since the last reset; only non-zero ones, and
    /// `nil` when there are none (see ``LevelCounterReporting``).
    public var levelCounters: [String: Int]?

    public init() {}

    /// Gets that were answered: hits, misses and errors.
    public var requests: Int { hits + misses + errors }

    /// Hits over answered gets (``requests``), 0 when none.
    public var hitRatio: Double {
        requests == 0 ? 0 : Double(hits) / Double(requests)
    }

    /// The counts that happened between `earlier` and this snapshot.
    /// Percentiles are not subtractable; the result keeps this snapshot's.
    /// Level counters are subtracted name by name.
    public func minus(_ earlier: StatisticsSnapshot) -> StatisticsSnapshot {
        var d = self
        d.gets -= earlier.gets
        d.hits -= earlier.hits
        d.misses -= earlier.misses
        d.errors -= earlier.errors
        d.sets -= earlier.sets
        d.setErrors -= earlier.setErrors
        d.removes -= earlier.removes
        d.removeErrors -= earlier.removeErrors
        d.clears -= earlier.clears
        d.memoryWarnings -= earlier.memoryWarnings
        d.backfills -= earlier.backfills
        d.backfillFailures -= earlier.backfillFailures
        if let counters = levelCounters {
            d.levelCounters = counters.reduce(into: [:]) { result, entry in
                result[entry.key] = entry.value - (earlier.levelCounters?[entry.key] ?? 0)
            }
        }
        return d
    }
}
