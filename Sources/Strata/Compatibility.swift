/// Names from Carlos and Droste, kept so code written against them reads the
/// same here. Each is an alias of a Strata operation; see the
/// "Coming from Carlos or Droste" table in docs/migrating.md.
extension CacheLevel {
    /// Droste's form of ``conditioned(_:)``: skips this level for keys where
    /// `predicate` is `true`.
    public func skipWhile(
        _ predicate: @escaping @Sendable (Key) async throws -> Bool
    ) -> ConditionedCache<Self> {
        ConditionedCache(self) { try await !predicate($0) }
    }

    /// Droste's closure form of ``transformKeys(_:)``.
    public func mapKeys<NewKey: Sendable>(
        _ transform: @escaping @Sendable (NewKey) async throws -> Key
    ) -> KeyTransformedCache<Self, NewKey> {
        KeyTransformedCache(self, transform: transform)
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
}

extension CacheLevel where Key: Hashable {
    /// Droste's name for `pooled()`.
    public func reuseInFlight() -> PooledCache<Self> { PooledCache(self) }
}
