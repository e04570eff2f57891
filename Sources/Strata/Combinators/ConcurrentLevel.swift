/// A level whose operations run on the global concurrent executor instead of
/// the caller's: see ``CacheLevel/concurrent()``.
///
/// Strata runs every operation, and every closure users give it (fetchers,
/// transformers, conditions, codecs), on the caller's executor, through every
/// wrapper, so a caller on an actor pays no hop per request. The exception is
/// ``PooledCache``, whose shared read runs in a task of its own. A level that
/// blocks its thread (a synchronous database driver, a slow file system) must
/// not run on an actor's executor: wrap it with `concurrent()`.
public struct ConcurrentLevel<Inner: CacheLevel>: WrapperLevel {
    /// The inner level's key.
    public typealias Key = Inner.Key
    /// The inner level's value.
    public typealias Value = Inner.Value

    public let inner: Inner

    /// `inner`, run on the global concurrent executor.
    public init(_ inner: Inner) { self.inner = inner }

    @concurrent public func getIfPresent(_ key: Key) async throws -> Value? { try await inner.getIfPresent(key) }
    @concurrent public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await inner.entry(forKey: key)
    }
    @concurrent public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency)
    }
    @concurrent public func set(_ value: Value, forKey key: Key) async throws { try await inner.set(value, forKey: key) }
    @concurrent public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await inner.set(value, forKey: key, expiresAt: expiresAt)
    }
    @concurrent public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try await inner.backfill(fill, forKey: key)
    }
    @concurrent public func remove(_ key: Key) async throws { try await inner.remove(key) }
    @concurrent public func clear() async { await inner.clear() }
    @concurrent public func onMemoryWarning() async { await inner.onMemoryWarning() }
}

extension CacheLevel {
    /// This level with every operation on the global concurrent executor, for
    /// levels and closures that block their thread: see ``ConcurrentLevel``.
    public func concurrent() -> ConcurrentLevel<Self> { ConcurrentLevel(self) }
}
