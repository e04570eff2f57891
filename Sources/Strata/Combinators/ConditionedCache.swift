/// A level that only takes part for keys that satisfy a condition.
///
/// When the condition is `false`, get throws ``FetchError/conditionNotSatisfied``
/// (a composition treats it as a miss) and set/remove are successful no-ops, so
/// back-fills never write into a skipped level. A condition that throws fails
/// the request with a ``LevelFailure`` (operation `.condition`).
public struct ConditionedCache<Inner: CacheLevel>: CacheLevel {
    public typealias Key = Inner.Key
    public typealias Value = Inner.Value

    public let inner: Inner
    @usableFromInline let condition: @Sendable (Key) async throws -> Bool

    public init(_ inner: Inner, condition: @escaping @Sendable (Key) async throws -> Bool) {
        self.inner = inner
        self.condition = condition
    }

    public var name: String { inner.name }

    @inlinable
    func allows(_ key: Key) async throws -> Bool {
        do { return try await condition(key) } catch {
            if error is CancellationError { throw error }
            throw LevelFailure(level: inner.name, operation: .condition, key: key, underlying: error)
        }
    }

    @inlinable
    public func get(_ key: Key) async throws -> Value {
        guard try await allows(key) else { throw FetchError.conditionNotSatisfied }
        return try await inner.get(key)
    }

    @inlinable
    public func getIfPresent(_ key: Key) async throws -> Value? {
        guard try await allows(key) else { return nil }
        return try await inner.getIfPresent(key)
    }

    public func set(_ value: Value, forKey key: Key) async throws {
        guard try await allows(key) else { return }
        try await inner.set(value, forKey: key)
    }

    public func remove(_ key: Key) async throws {
        guard try await allows(key) else { return }
        try await inner.remove(key)
    }

    public func clear() async { await inner.clear() }
    public func onMemoryWarning() async { await inner.onMemoryWarning() }
    public func waitForPendingWrites() async { await inner.waitForPendingWrites() }
}

extension CacheLevel {
    /// Skips this level for keys where `condition` is `false`: see ``ConditionedCache``.
    public func conditioned(
        _ condition: @escaping @Sendable (Key) async throws -> Bool
    ) -> ConditionedCache<Self> {
        ConditionedCache(self, condition: condition)
    }

    /// Droste's form: skips this level for keys where `predicate` is `true`.
    public func skipWhile(
        _ predicate: @escaping @Sendable (Key) async throws -> Bool
    ) -> ConditionedCache<Self> {
        ConditionedCache(self) { try await !predicate($0) }
    }
}
