/// A level addressed by a different key type; each key is transformed before
/// it reaches `inner`. A key the transformer rejects with a ``FetchError`` (a
/// conditioned transformer that declined) skips the level: a get is a miss and
/// a set or remove a no-op. Any other error fails that request only, with a
/// ``LevelFailure`` naming the level and the key.
public struct KeyTransformedCache<Inner: CacheLevel, NewKey: Sendable>: WrapperLevel {
    /// The key callers use, transformed into the inner level's.
    public typealias Key = NewKey
    /// The inner level's value.
    public typealias Value = Inner.Value

    public let inner: Inner
    @usableFromInline let transformKey: @Sendable (NewKey) async throws -> Inner.Key

    /// `inner` addressed by `NewKey`, each key turned into an inner key by `transform`.
    public init(_ inner: Inner, transform: @escaping @Sendable (NewKey) async throws -> Inner.Key) {
        self.inner = inner
        self.transformKey = transform
    }

    /// The inner key, or `nil` when the transformer declined the key.
    @inlinable
    func innerKey(_ key: NewKey) async throws -> Inner.Key? {
        try await transformedOrMiss(inner.name, .transformKey, key: key) { try await transformKey(key) }
    }

    @inlinable public func getIfPresent(_ key: NewKey) async throws -> Value? {
        guard let innerKey = try await innerKey(key) else { return nil }
        return try await inner.getIfPresent(innerKey)
    }

    @inlinable public func entry(forKey key: NewKey) async throws -> CacheEntry<Value>? {
        guard let innerKey = try await innerKey(key) else { return nil }
        return try await inner.entry(forKey: innerKey)
    }

    public func entries(forKeys keys: [NewKey], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        var mapped: [(index: Int, key: Inner.Key)] = []
        for (index, key) in keys.enumerated() {
            if let innerKey = try? await innerKey(key) { mapped.append((index, innerKey)) }
        }
        let found = await inner.entries(forKeys: mapped.map(\.key), maxConcurrency: maxConcurrency)
        var results = [CacheEntry<Value>?](repeating: nil, count: keys.count)
        for (position, item) in mapped.enumerated() { results[item.index] = found[position] }
        return results
    }

    /// The inner key of a change cannot be mapped back to this level's key, so
    /// a changed inner key is reported as ``CacheInvalidation/all``.
    public func subscribe(_ listener: @escaping @Sendable (CacheChange<NewKey>) async -> Void) -> CacheSubscription {
        inner.subscribe { await listener($0.withoutKey()) }
    }

    public func set(_ value: Value, forKey key: NewKey) async throws {
        guard let innerKey = try await CacheContext.asUserCode({ try await innerKey(key) }) else { return }
        try await inner.set(value, forKey: innerKey)
    }

    public func set(_ value: Value, forKey key: NewKey, expiresAt: CacheInstant?) async throws {
        guard let innerKey = try await CacheContext.asUserCode({ try await innerKey(key) }) else { return }
        try await inner.set(value, forKey: innerKey, expiresAt: expiresAt)
    }

    public func backfill(_ fill: Backfill<Value>, forKey key: NewKey) async throws {
        guard let innerKey = try await CacheContext.asUserCode({ try await innerKey(key) }) else { return }
        try await inner.backfill(fill, forKey: innerKey)
    }

    public func remove(_ key: NewKey) async throws {
        guard let innerKey = try await innerKey(key) else { return }
        try await inner.remove(innerKey)
    }

    public func invalidate(_ invalidation: CacheInvalidation<NewKey>) async throws {
        switch invalidation {
        case .key(let key):
            guard let innerKey = try await innerKey(key) else { return }
            try await inner.invalidate(.key(innerKey))
        case .all: try await inner.invalidate(.all)
        case .contactLost: try await inner.invalidate(.contactLost)
        }
    }
}

extension CacheLevel {
    /// A level keyed by `transformer.TypeIn`; keys are transformed on every operation.
    public func transformKeys<T: OneWayTransformer>(_ transformer: T) -> KeyTransformedCache<Self, T.TypeIn>
    where T.TypeOut == Key {
        KeyTransformedCache(self) { try await transformer.transform($0) }
    }
}
