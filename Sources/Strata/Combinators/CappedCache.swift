/// At most `limit` operations in flight on `inner`; the rest wait in line,
/// first come first served. Clear and memory warnings are not capped.
public struct CappedCache<Inner: CacheLevel>: WrapperLevel {
    /// The inner level's key.
    public typealias Key = Inner.Key
    /// The inner level's value.
    public typealias Value = Inner.Value

    public let inner: Inner
    /// The permits operations take; `waiting` and `available` show the line.
    public let semaphore: AsyncSemaphore

    /// `inner` with at most `limit` operations in flight.
    public init(_ inner: Inner, limit: Int) {
        self.inner = inner
        self.semaphore = AsyncSemaphore(limit: limit)
    }

    public func getIfPresent(_ key: Key) async throws -> Value? {
        try await semaphore.withPermit { try await inner.getIfPresent(key) }
    }

    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await semaphore.withPermit { try await inner.entry(forKey: key) }
    }

    /// A batch holds one permit.
    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        (try? await semaphore.withPermit { await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency) })
            ?? [CacheEntry<Value>?](repeating: nil, count: keys.count)
    }

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await semaphore.withPermit { try await inner.set(value, forKey: key, expiresAt: expiresAt) }
    }

    public func set(_ value: Value, forKey key: Key) async throws {
        try await semaphore.withPermit { try await inner.set(value, forKey: key) }
    }

    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try await semaphore.withPermit { try await inner.backfill(fill, forKey: key) }
    }

    public func remove(_ key: Key) async throws {
        try await semaphore.withPermit { try await inner.remove(key) }
    }

}

extension CacheLevel {
    /// At most `limit` requests in flight on this level: see ``CappedCache``.
    public func capRequests(_ limit: Int) -> CappedCache<Self> { CappedCache(self, limit: limit) }
}
