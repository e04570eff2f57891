import Strata

extension RedisCacheLevel: LevelCounterReporting {
    /// `decodeFailures`, read into an instrumented level's statistics snapshots.
    public var levelCounters: [String: Int] { ["decodeFailures": decodeFailures] }
}
