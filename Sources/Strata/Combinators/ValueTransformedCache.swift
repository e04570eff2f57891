/// A level whose values are transformed on the way out (get) and, for two-way
/// transformations, on the way in (set). Both closures receive the key.
///
/// Backs ``CacheLevel/transformValues(_:)``, ``CacheLevel/mapValues(_:inverse:)``,
/// `postProcess(_:)`, ``CacheLevel/conditionedPostProcess(_:)`` and
/// ``CacheLevel/conditionedValueTransformation(_:)``. A transformation that
/// declines with a ``FetchError`` (a conditioned transformer) is a skip: on a
/// get, a miss; on a set, the level keeps no value for the key (its old one is
/// removed, so it can never be served). Any other failure fails that request
/// with a ``LevelFailure`` naming the level and key; a set that fails so
/// also removes the old value (a back-fill's leaves it: it follows a miss).
public struct ValueTransformedCache<Inner: CacheLevel, NewValue: Sendable>: WrapperLevel {
    /// The inner level's key.
    public typealias Key = Inner.Key
    /// The value callers see, transformed from the inner level's.
    public typealias Value = NewValue

    public let inner: Inner
    @usableFromInline let forward: @Sendable (Inner.Key, Inner.Value) async throws -> NewValue
    @usableFromInline let inverse: @Sendable (Inner.Key, NewValue) async throws -> Inner.Value

    /// `inner` with values turned by `transform` on the way out and by
    /// `inverseTransform` on the way in; each receives the key.
    public init(
        _ inner: Inner,
        transform: @escaping @Sendable (Inner.Key, Inner.Value) async throws -> NewValue,
        inverseTransform: @escaping @Sendable (Inner.Key, NewValue) async throws -> Inner.Value
    ) {
        self.inner = inner
        self.forward = transform
        self.inverse = inverseTransform
    }

    @inlinable
    public func getIfPresent(_ key: Key) async throws -> NewValue? {
        guard let value = try await inner.getIfPresent(key) else { return nil }
        return try await transformedOrMiss(inner.name, .transformValue, key: key) { try await forward(key, value) }
    }

    @inlinable
    public func entry(forKey key: Key) async throws -> CacheEntry<NewValue>? {
        guard let entry = try await inner.entry(forKey: key) else { return nil }
        let value = try await transformedOrMiss(inner.name, .transformValue, key: key) {
            try await forward(key, entry.value)
        }
        return value.map { CacheEntry(value: $0, expiresAt: entry.expiresAt) }
    }

    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<NewValue>?] {
        let found = await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency)
        var results = [CacheEntry<NewValue>?](repeating: nil, count: keys.count)
        for (index, entry) in found.enumerated() {
            guard let entry else { continue }
            let key = keys[index]
            let value = try? await transformedOrMiss(inner.name, .transformValue, key: key) {
                try await forward(key, entry.value)
            }
            if let value { results[index] = CacheEntry(value: value, expiresAt: entry.expiresAt) }
        }
        return results
    }

    public func set(_ value: NewValue, forKey key: Key) async throws {
        try await set(value, forKey: key, expiresAt: nil)
    }

    public func set(_ value: NewValue, forKey key: Key, expiresAt: CacheInstant?) async throws {
        let stored: Inner.Value?
        do {
            stored = try await transformedOrMiss(inner.name, .inverseTransformValue, key: key) {
                try await CacheContext.asUserCode { try await inverse(key, value) }
            }
        } catch {
            // The set fails, so the value it was replacing must go too (best
            // effort), or a later get would be answered with it.
            try? await inner.remove(key)
            throw error
        }
        guard let stored else { return try await inner.remove(key) }
        if let expiresAt {
            try await inner.set(stored, forKey: key, expiresAt: expiresAt)
        } else {
            try await inner.set(stored, forKey: key)
        }
    }

    /// A back-fill that does not transform writes nothing and drops nothing:
    /// it follows a miss here, so any value the level holds now was written
    /// since, and is newer. One whose inverse gives nothing writes nothing.
    public func backfill(_ fill: Backfill<NewValue>, forKey key: Key) async throws {
        guard let stored = try await transformedOrMiss(inner.name, .inverseTransformValue, key: key, {
            try await CacheContext.asUserCode { try await inverse(key, fill.value) }
        }) else { return }
        try await inner.backfill(fill.with(value: stored), forKey: key)
    }

    public func remove(_ key: Key) async throws { try await inner.remove(key) }
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

    /// Runs `transformer` on every value a get returns; sets are untouched.
    public func postProcess<T: OneWayTransformer>(_ transformer: T) -> ValueTransformedCache<Self, Value>
    where T.TypeIn == Value, T.TypeOut == Value {
        ValueTransformedCache(
            self,
            transform: { _, value in try await transformer.transform(value) },
            inverseTransform: { _, value in value }
        )
    }

    /// Closure form of `postProcess(_:)` with a ``OneWayTransformer``.
    public func postProcess(
        _ transform: @escaping @Sendable (Value) async throws -> Value
    ) -> ValueTransformedCache<Self, Value> {
        postProcess(OneWayTransformationBox(transform: transform))
    }

    /// Like `postProcess(_:)` with a ``OneWayTransformer``, but the transformer also sees the key.
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
