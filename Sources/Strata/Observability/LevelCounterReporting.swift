/// A level that keeps counters of its own (the memory level's evictions, a
/// disk level's corrupt entries removed or decode failures).
///
/// ``CacheLevel/instrumented(name:)`` finds it when it wraps the level and
/// reads it at snapshot time only, so the level's hot paths pay nothing;
/// the counters appear in ``StatisticsSnapshot/levelCounters``.
public protocol LevelCounterReporting: Sendable {
    /// The level's counters now, by name.
    var levelCounters: [String: Int] { get }
}

extension MemoryCacheLevel: LevelCounterReporting {
    /// `evictions`, and `admissionsRejected` under ``EvictionPolicy/adaptive``.
    public var levelCounters: [String: Int] {
        isAdaptive ? ["evictions": evictions, "admissionsRejected": admissionsRejected] : ["evictions": evictions]
    }
}

extension DiskCacheLevel: LevelCounterReporting {
    /// `evictions`, `corruptEntriesRemoved` and `decodeFailures`, and
    /// `admissionsRejected` under ``EvictionPolicy/adaptive``.
    public var levelCounters: [String: Int] {
        var counters = ["evictions": evictions, "corruptEntriesRemoved": corruptEntriesRemoved, "decodeFailures": decodeFailures]
        if policy == .adaptive { counters["admissionsRejected"] = admissionsRejected }
        return counters
    }
}

/// The counters `level` keeps, found through wrappers and erasure
/// (``BasicCache`` carries those of the level it erased); `nil` when none.
@usableFromInline
func levelCounterSource(of level: some CacheLevel) -> (@Sendable () -> [String: Int])? {
    if let reporting = level as? any LevelCounterReporting { return { reporting.levelCounters } }
    if let wrapper = level as? any WrapperLevel { return innerCounterSource(of: wrapper) }
    return nil
}

func innerCounterSource(of wrapper: some WrapperLevel) -> (@Sendable () -> [String: Int])? {
    levelCounterSource(of: wrapper.inner)
}
