/// The counters of one instrumented level at one moment: a value, so two
/// snapshots can be compared and subtracted (``minus(_:)``).
public struct StatisticsSnapshot: Sendable, Equatable, Codable {
    /// Gets that finished: hits, misses, errors and cancelled gets.
    public var gets = 0
    /// Gets answered with a value.
    public var hits = 0
    /// Gets answered with nothing (or skipped by a condition).
    public var misses = 0
    /// Gets that failed (cancelled gets are not errors).
    public var errors = 0
    /// Sets that stored (back-fills are ``backfills``).
    public var sets = 0
    /// Sets that failed (back-fills that failed are ``backfillFailures``).
    public var setErrors = 0
    /// Removes that succeeded (users' removes).
    public var removes = 0
    /// Keys (or, for a flush, everything) dropped because a level below
    /// reported a change made elsewhere (``CacheLevel/invalidate(_:)``).
    public var invalidations = 0
    /// Removes that failed (counted apart from get errors, so they do not
    /// lower the hit ratio).
    public var removeErrors = 0
    /// `clear()` calls.
    public var clears = 0
    /// `onMemoryWarning()` calls.
    public var memoryWarnings = 0
    /// Back-fill writes (started by a composed get) that stored.
    public var backfills = 0
    /// Back-fill writes that failed.
    public var backfillFailures = 0
    /// Get latency percentiles in nanoseconds (`nil` before the first timed get).
    public var getP50: UInt64?
    /// See ``getP50``.
    public var getP99: UInt64?
    /// Counters the level itself keeps, by name (for example the memory
    /// level's `evictions`), since the last reset; only non-zero ones, and
    /// `nil` when there are none (see ``LevelCounterReporting``).
    public var levelCounters: [String: Int]?

    /// All zero, no percentiles.
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
        d.invalidations -= earlier.invalidations
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
