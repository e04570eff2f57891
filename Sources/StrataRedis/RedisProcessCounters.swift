import Synchronization

/// Counts across every Redis level of the process, for tests of behaviour
/// that depends on timing (a loaded machine).
package enum RedisProcessCounters {
    /// Back-fills taken back because their reply came later than the margin
    /// allows (``RedisCacheLevel``'s `backfillMargin`): Redis reports their
    /// write and its undo, which may reach the levels above as changes.
    package static let backfillsTakenBack = Atomic<Int>(0)
}
