import Strata

/// A wrapper of the explorer's that changes one thing about its level
/// (``ReadOnlyLevel``, ``PrivateDirectoryLevel``): reads and writes it does
/// not implement pass through unchanged.
protocol PassThroughLevel: WrapperLevel where Key == Inner.Key, Value == Inner.Value {}

extension PassThroughLevel {
    func getIfPresent(_ key: Key) async throws -> Value? { try await inner.getIfPresent(key) }

    func entry(forKey key: Key) async throws -> CacheEntry<Value>? { try await inner.entry(forKey: key) }

    func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency)
    }

    func set(_ value: Value, forKey key: Key) async throws { try await inner.set(value, forKey: key) }

    func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await inner.set(value, forKey: key, expiresAt: expiresAt)
    }

    func remove(_ key: Key) async throws { try await inner.remove(key) }
}
