/// The deadline a storing level gives a write, one rule for every level
/// with a TTL of its own (`defaultTTL:`, ``CacheLevel/expires(at:)``):
///
/// - a set without a deadline gets the level's own (`own`);
/// - a set with one keeps it (the caller's choice);
/// - a back-fill (``CacheLevel/backfill(_:forKey:)``) carries the lower entry's
///   deadline, and keeps the earlier of that and the level's own: a level
///   never keeps a value it did not get from a set longer than it keeps a set
///   (`memory(ttl 10s) + disk(ttl 5m)` holds a back-filled value in memory
///   10 s at most, as FusionCache's memory duration bounds what it copies
///   from its distributed level).
public enum StoredDeadline {
    /// The deadline to store a write with, by the rule above (`nil`: never expires).
    ///
    /// - Parameters:
    ///   - given: the write's deadline, if it carries one.
    ///   - backfill: whether the write is a back-fill.
    ///   - own: the level's own deadline for a write now (`nil`: never);
    ///     called only when it decides.
    @inlinable
    public static func resolve(given: CacheInstant?, backfill: Bool,
                               own: () throws -> CacheInstant?) rethrows -> CacheInstant? {
        guard let given else { return try own() }
        guard backfill, let own = try own() else { return given }
        return min(given, own)
    }
}
