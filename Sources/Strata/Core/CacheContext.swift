/// Task-local facts about the request being served, read by observability
/// wrappers (``InstrumentedCache``) and set by combinators.
public enum CacheContext {
    /// `true` inside a back-fill write started by a composed get.
    @TaskLocal public static var isBackfill = false
    /// The trace of the current request, when a caller asked for one
    /// (see ``RequestTrace``).
    @TaskLocal public static var trace: RequestTrace?
}
