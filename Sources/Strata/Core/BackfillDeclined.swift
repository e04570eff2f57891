/// A level's answer to a back-fill (``CacheLevel/backfill(_:forKey:)``) when
/// it holds a value written since: a shared store that another process wrote
/// while this one was reading below it. Not a failure: the value being
/// back-filled is older than the one the level holds, so a composition stops
/// the back-fill there and writes nothing above, and the back-fill is counted
/// as skipped.
///
/// A memory level (one process's, ordered by its stack) never throws it; a
/// disk level renames a back-fill into place only where no entry is
/// (`RENAME_NOREPLACE`), a key-value store level checks under its file lock,
/// and ``RedisCacheLevel`` writes back-fills with `SET … NX`.
public struct BackfillDeclined: Error, Equatable, Sendable {
    public init() {}
}
