/// A level that only takes part for keys that satisfy a condition.
///
/// When the condition is `false` the level is skipped: a get is a miss (`nil`,
/// never an error), and a set stores nothing (so back-fills never write into a
/// skipped level) but drops the level's copy of the key, if it holds one. A
/// remove always reaches the level. So a condition that changes over time (a
/// toggle) never brings back a value that was overwritten or removed while it
/// was off, and an invalidation from below still drops the key. A condition
/// that throws fails the request with a ``LevelFailure`` (operation `.condition`).
public struct ConditionedCache<Inner: CacheLevel>: WrapperLevel {
    /// The inner level's key.
    public typealias Key = Inner.Key
    /// The inner level's value.
    public typealias Value = Inner.Value

    public let inner: Inner
    @usableFromInline let condition: @Sendable (Key) async throws -> Bool

    /// `inner`, taking part only for keys for which `condition` returns `true`.
    public init(_ inner: Inner, condition: @escaping @Sendable (Key) async throws -> Bool) {
        self.inner = inner
        self.condition = condition
    }

    @inlinable
    func allows(_ key: Key) async throws -> Bool {
        try await asLevelFailure(inner.name, .condition, key: key) { try await condition(key) }
    }

    @inlinable
    public func getIfPresent(_ key: Key) async throws -> Value? {
        guard try await allows(key) else { return nil }
        return try await inner.getIfPresent(key)
    }

    @inlinable
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        guard try await allows(key) else { return nil }
        return try await inner.entry(forKey: key)
    }

    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        var allowed: [Int] = []
        for (index, key) in keys.enumerated() where (try? await allows(key)) == true { allowed.append(index) }
        let found = await inner.entries(forKeys: allowed.map { keys[$0] }, maxConcurrency: maxConcurrency)
        var results = [CacheEntry<Value>?](repeating: nil, count: keys.count)
        for (position, index) in allowed.enumerated() { results[index] = found[position] }
        return results
    }

    public func set(_ value: Value, forKey key: Key) async throws {
        guard try await CacheContext.asUserCode({ try await allows(key) }) else { return try await skipped(key) }
        try await inner.set(value, forKey: key)
    }

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        guard try await CacheContext.asUserCode({ try await allows(key) }) else { return try await skipped(key) }
        try await inner.set(value, forKey: key, expiresAt: expiresAt)
    }

    /// A set the condition turned away drops the level's copy.
    @usableFromInline
    func skipped(_ key: Key) async throws {
        try await inner.remove(key)
    }

    /// A back-fill the condition turns away writes nothing and drops nothing:
    /// sets and removes already keep the level free of older values.
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        guard try await CacheContext.asUserCode({ try await allows(key) }) else { return }
        try await inner.backfill(fill, forKey: key)
    }

    /// A refresh the condition turns away drops the level's copy, as a set
    /// does: the value it replaces must not be answered again.
    public func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws {
        guard try await CacheContext.asUserCode({ try await allows(key) }) else { return try await skipped(key) }
        try await inner.replace(seen, with: fill, forKey: key)
    }

    /// Reaches the level whatever the condition says: removing can only make
    /// it forget, and what it held may have been stored while the condition was true.
    public func remove(_ key: Key) async throws {
        try await inner.remove(key)
    }
}

extension CacheLevel {
    /// Skips this level for keys where `condition` is `false`: see ``ConditionedCache``.
    public func conditioned(
        _ condition: @escaping @Sendable (Key) async throws -> Bool
    ) -> ConditionedCache<Self> {
        ConditionedCache(self, condition: condition)
    }
}
