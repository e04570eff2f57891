/// A level addressed by a different key type; each key is transformed before
/// it reaches `inner`. A key the transformer rejects fails that request only,
/// with a ``LevelFailure`` naming the level and the key.
public struct KeyTransformedCache<Inner: CacheLevel, NewKey: Sendable>: CacheLevel {
    public typealias Key = NewKey
    public typealias Value = Inner.Value

    public let inner: Inner
    @usableFromInline let transformKey: @Sendable (NewKey) async throws -> Inner.Key

    public init(_ inner: Inner, transform: @escaping @Sendable (NewKey) async throws -> Inner.Key) {
        self.inner = inner
        self.transformKey = transform
    }

    public var name: String { inner.name }

    @inlinable
    func innerKey(_ key: NewKey) async throws -> Inner.Key {
        do { return try await transformKey(key) } catch {
            if error is CancellationError { throw error }
            throw LevelFailure(level: inner.name, operation: .transformKey, key: key, underlying: error)
        }
    }

    @inlinable public func get(_ key: NewKey) async throws -> Value { try await inner.get(try await innerKey(key)) }
    @inlinable public func getIfPresent(_ key: NewKey) async throws -> Value? {
        try await inner.getIfPresent(try await innerKey(key))
    }
    public func set(_ value: Value, forKey key: NewKey) async throws {
        try await inner.set(value, forKey: try await innerKey(key))
    }
    public func remove(_ key: NewKey) async throws { try await inner.remove(try await innerKey(key)) }
    public func clear() async { await inner.clear() }
    public func onMemoryWarning() async { await inner.onMemoryWarning() }
    public func waitForPendingWrites() async { await inner.waitForPendingWrites() }
}

extension CacheLevel {
    /// A level keyed by `transformer.TypeIn`; keys are transformed on every operation.
    public func transformKeys<T: OneWayTransformer>(_ transformer: T) -> KeyTransformedCache<Self, T.TypeIn>
    where T.TypeOut == Key {
        KeyTransformedCache(self) { try await transformer.transform($0) }
    }

    /// Droste's closure form of ``transformKeys(_:)``.
    public func mapKeys<NewKey: Sendable>(
        _ transform: @escaping @Sendable (NewKey) async throws -> Key
    ) -> KeyTransformedCache<Self, NewKey> {
        KeyTransformedCache(self, transform: transform)
    }
}
