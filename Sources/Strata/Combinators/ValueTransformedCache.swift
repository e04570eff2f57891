/// A level whose values are transformed on the way out (get) and, for two-way
/// transformations, on the way in (set). Both closures receive the key.
///
/// Backs ``CacheLevel/transformValues(_:)``, ``CacheLevel/mapValues(_:inverse:)``,
/// ``CacheLevel/postProcess(_:)``, ``CacheLevel/conditionedPostProcess(_:)`` and
/// ``CacheLevel/conditionedValueTransformation(_:)``. A failing transformation
/// fails that request with a ``LevelFailure`` naming the level and key.
public struct ValueTransformedCache<Inner: CacheLevel, NewValue: Sendable>: CacheLevel {
    public typealias Key = Inner.Key
    public typealias Value = NewValue

    public let inner: Inner
    @usableFromInline let forward: @Sendable (Inner.Key, Inner.Value) async throws -> NewValue
    @usableFromInline let inverse: @Sendable (Inner.Key, NewValue) async throws -> Inner.Value

    public init(
        _ inner: Inner,
        transform: @escaping @Sendable (Inner.Key, Inner.Value) async throws -> NewValue,
        inverseTransform: @escaping @Sendable (Inner.Key, NewValue) async throws -> Inner.Value
    ) {
        self.inner = inner
        self.forward = transform
        self.inverse = inverseTransform
    }

    public var name: String { inner.name }

    @inlinable
    public func get(_ key: Key) async throws -> NewValue {
        try await convert(key, try await inner.get(key))
    }

    @inlinable
    public func getIfPresent(_ key: Key) async throws -> NewValue? {
        guard let value = try await inner.getIfPresent(key) else { return nil }
        return try await convert(key, value)
    }

    @inlinable
    func convert(_ key: Key, _ value: Inner.Value) async throws -> NewValue {
        do { return try await forward(key, value) } catch {
            if error is CancellationError || error is FetchError { throw error }
            throw LevelFailure(level: inner.name, operation: .transformValue, key: key, underlying: error)
        }
    }

    public func set(_ value: NewValue, forKey key: Key) async throws {
        let stored: Inner.Value
        do { stored = try await inverse(key, value) } catch {
            if error is CancellationError || error is FetchError { throw error }
            throw LevelFailure(level: inner.name, operation: .inverseTransformValue, key: key, underlying: error)
        }
        try await inner.set(stored, forKey: key)
    }

    public func remove(_ key: Key) async throws { try await inner.remove(key) }
    public func clear() async { await inner.clear() }
    public func onMemoryWarning() async { await inner.onMemoryWarning() }
    public func waitForPendingWrites() async { await inner.waitForPendingWrites() }
}

extension CacheLevel {
    /// Values go through `transformer` on get and its inverse on set.
    public func transformValues<T: TwoWayTransformer>(_ transformer: T) -> ValueTransformedCache<Self, T.TypeOut>
    where T.TypeIn == Value {
        ValueTransformedCache(
            self,
            transform: { _, value in try await transformer.transform(value) },
            inverseTransform: { _, value in try await transformer.inverseTransform(value) }
        )
    }

    /// Droste's closure form of ``transformValues(_:)``.
    public func mapValues<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) async throws -> NewValue,
        inverse: @escaping @Sendable (NewValue) async throws -> Value
    ) -> ValueTransformedCache<Self, NewValue> {
        ValueTransformedCache(
            self,
            transform: { _, value in try await transform(value) },
            inverseTransform: { _, value in try await inverse(value) }
        )
    }

    /// Runs `transformer` on every value a get returns; sets are untouched.
    public func postProcess<T: OneWayTransformer>(_ transformer: T) -> ValueTransformedCache<Self, Value>
    where T.TypeIn == Value, T.TypeOut == Value {
        ValueTransformedCache(
            self,
            transform: { _, value in try await transformer.transform(value) },
            inverseTransform: { _, value in value }
        )
    }

    /// Closure form of ``postProcess(_:)-(OneWayTransformer)``.
    public func postProcess(
        _ transform: @escaping @Sendable (Value) async throws -> Value
    ) -> ValueTransformedCache<Self, Value> {
        postProcess(OneWayTransformationBox(transform: transform))
    }

    /// Like ``postProcess(_:)-(OneWayTransformer)`` but the transformer also sees the key.
    public func conditionedPostProcess<T: ConditionedOneWayTransformer>(
        _ transformer: T
    ) -> ValueTransformedCache<Self, Value>
    where T.KeyType == Key, T.TypeIn == Value, T.TypeOut == Value {
        ValueTransformedCache(
            self,
            transform: { key, value in try await transformer.conditionalTransform(key: key, value: value) },
            inverseTransform: { _, value in value }
        )
    }

    /// Like ``transformValues(_:)`` but both directions also see the key.
    public func conditionedValueTransformation<T: ConditionedTwoWayTransformer>(
        _ transformer: T
    ) -> ValueTransformedCache<Self, T.TypeOut>
    where T.KeyType == Key, T.TypeIn == Value {
        ValueTransformedCache(
            self,
            transform: { key, value in try await transformer.conditionalTransform(key: key, value: value) },
            inverseTransform: { key, value in try await transformer.conditionalInverseTransform(key: key, value: value) }
        )
    }
}
