import Synchronization
/// Task-local facts about the request being served, read by observability
/// wrappers (``InstrumentedCache``) and set by combinators.
public enum CacheContext {
    /// Runs a user closure met on a write (a transformer's inverse, a
    /// condition) outside the write: a write it makes of its own is no part
    /// of the composition's write (a shared store reports it to that
    /// composition too: see ``CacheWriteOrigin``).
    static func asUserCode<T>(_ body: () async throws -> T) async rethrows -> T {
        guard !origin.writers.isEmpty else { return try await body() }
        return try await $origin.withValue(CacheWriteOrigin()) { try await body() }
    }

    /// While a composition reads its lower level: when the read whose answer
    /// it may receive began. A level that hands a caller the answer of a read
    /// that began earlier (``PooledCache``, when a get joins a read in flight)
    /// moves it back, so that the back-fill is judged by the age of the read
    /// that saw the data (a shared store's tombstones), not by the caller's.
    /// Set only by compositions.
    @usableFromInline @TaskLocal static var readStart: ReadStart?

    /// The oldest read a composition still back-fills: one that began
    /// longer ago is dropped. Shared stores keep what stops back-fills (a
    /// remove's tombstone in Redis) at least twice as long.
    public static var backfillAgeLimit: Duration { .seconds(300) }

    /// The trace of the current request, when a caller asked for one
    /// (see ``RequestTrace``).
    @TaskLocal public static var trace: RequestTrace?
}

/// When the read a composition is waiting for began (see ``CacheContext/readStart``);
/// moving it back moves back those of the compositions it is nested in.
@usableFromInline
final class ReadStart: Sendable {
    private let instant: Mutex<ContinuousClock.Instant>
    private let parent: ReadStart?

    @usableFromInline
    init(_ instant: ContinuousClock.Instant, parent: ReadStart?) {
        self.instant = Mutex(instant)
        self.parent = parent
    }

    @usableFromInline
    var value: ContinuousClock.Instant { instant.withLock { $0 } }

    /// The answer comes from a read that began at `earlier`.
    func moveBack(to earlier: ContinuousClock.Instant) {
        instant.withLock { $0 = min($0, earlier) }
        parent?.moveBack(to: earlier)
    }
}
