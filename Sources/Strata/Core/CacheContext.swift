/// Task-local facts about the request being served, read by observability
/// wrappers (``InstrumentedCache``) and set by combinators.
public enum CacheContext {
    /// `true` inside a back-fill write started by a composed get. Read-only
    /// outside the library, so no caller can make its own writes count as
    /// back-fills in the statistics.
    public static var isBackfill: Bool { backfill }

    /// The flag behind ``isBackfill``; set only by ``BackfillTracker``.
    @usableFromInline @TaskLocal static var backfill = false

    /// The trace of the current request, when a caller asked for one
    /// (see ``RequestTrace``).
    @TaskLocal public static var trace: RequestTrace?
}
