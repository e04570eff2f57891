import Logging
import Strata

/// A Redis level's warnings, each logged at once, then at most once per
/// 10 s with a count of those left out. One set per level, made with it (a
/// warning made anew at each use would log every time).
final class RedisWarnings: Sendable {
    static let logger = Logger(label: "strata.redis")
    /// A write kept during an outage that Redis refused when it was replayed.
    let replayRefused = RateLimitedWarning(RedisWarnings.logger, "outage backlog write refused on replay, dropped")
    /// A cluster clear whose tombstones did not reach every slot (the clear throws).
    let clearTombstonesFailed = RateLimitedWarning(
        RedisWarnings.logger, "clear tombstones not written in every slot: the clear failed, back-fills begun before it could land there")
    /// A value under the level's prefix that its codec cannot read.
    let undecodable = RateLimitedWarning(
        RedisWarnings.logger, "a value in Redis does not decode: read as a miss, left for whoever wrote it")
}
