/// A level's answer to a back-fill (``CacheLevel/backfill(_:forKey:)``) when
/// it holds a value written since the back-fill's read began, or a remove was
/// made since (a tombstone; see ``Backfill``): not a failure. A
/// composition stops the back-fill there, writes nothing above, and counts it
/// as skipped. Shared stores throw it (disk, key-value store, Redis); a memory
/// level, ordered by its stack, never does.
public struct BackfillDeclined: Error, Equatable, Sendable {
    /// The answer of a level that holds a newer value than the back-fill's, or a newer remove.
    public init() {}
}
