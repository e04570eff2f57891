/// The contract of a level that wraps one other level (``inner``).
///
/// A wrapper implements what it changes and inherits the rest: by default it
/// takes its inner level's name and forwards ``CacheLevel/clear()``,
/// ``CacheLevel/onMemoryWarning()`` and ``CacheLevel/waitForPendingWrites()``,
/// so no wrapper can forget to wait for the back-fills below it. Reads and
/// writes are never forwarded by default: each wrapper says what it does to them.
public protocol WrapperLevel: CacheLevel {
    /// The type of the wrapped level.
    associatedtype Inner: CacheLevel
    /// The wrapped level.
    var inner: Inner { get }
}

extension WrapperLevel {
    public var name: String { inner.name }
    public func clear() async { await inner.clear() }
    public func onMemoryWarning() async { await inner.onMemoryWarning() }
    public func waitForPendingWrites() async { await inner.waitForPendingWrites() }
    public var sharesReadsInFlight: Bool { inner.sharesReadsInFlight }
    public func lostCoherence() { inner.lostCoherence() }
    /// The inner level's: a wrapper value is told apart by the level it wraps.
    public var stackIdentity: ObjectIdentifier? { inner.stackIdentity }
    /// Keys of another type than the inner level's: every read in flight below ends its sharing.
    public func endSharingReads(_ invalidation: CacheInvalidation<Key>) { inner.endSharingReads(.all) }
}

extension WrapperLevel where Self: AnyObject {
    /// A wrapper object is told apart by the level it wraps.
    public var stackIdentity: ObjectIdentifier? { inner.stackIdentity }
}

extension WrapperLevel where Key == Inner.Key, Value == Inner.Value {
    /// A back-fill reaches the inner level as such.
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try await inner.backfill(fill, forKey: key)
    }

    /// A refresh reaches the inner level as such.
    public func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws {
        try await inner.replace(seen, with: fill, forKey: key)
    }
}

extension WrapperLevel where Key == Inner.Key {
    /// The inner level's reads in flight for these keys end their sharing.
    public func endSharingReads(_ invalidation: CacheInvalidation<Key>) { inner.endSharingReads(invalidation) }

    /// A change reported from elsewhere reaches the inner level as such
    /// (whatever a condition or a permit says: it only makes the level forget).
    public func invalidate(_ invalidation: CacheInvalidation<Key>) async throws {
        try await inner.invalidate(invalidation)
    }

    /// Invalidations of the inner level's keys are this level's keys.
    public func subscribe(_ listener: @escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription {
        inner.subscribe(listener)
    }
}

/// Runs `body`; any error but cancellation is rethrown as a ``LevelFailure`` of
/// `level`. The one place a wrapper turns a closure's error into a level's.
@inlinable
func asLevelFailure<T>(
    _ level: String, _ operation: CacheOperation, key: some Sendable,
    _ body: () async throws -> T
) async throws -> T {
    do { return try await body() } catch {
        if error is CancellationError || error is LevelFailure { throw error }
        throw LevelFailure(level: level, operation: operation, key: key, underlying: error)
    }
}

/// Runs a transformation on the read path: a ``FetchError`` from it (a
/// conditioned transformer that declined) is a miss, `nil`; any other error
/// but cancellation is a ``LevelFailure`` of `level`.
@inlinable
func transformedOrMiss<T>(
    _ level: String, _ operation: CacheOperation, key: some Sendable,
    _ body: () async throws -> T
) async throws -> T? {
    do { return try await body() } catch {
        if let fetch = error as? FetchError, fetch.isMiss { return nil }
        if error is CancellationError || error is LevelFailure { throw error }
        throw LevelFailure(level: level, operation: operation, key: key, underlying: error)
    }
}
