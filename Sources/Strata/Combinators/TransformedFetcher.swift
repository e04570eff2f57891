/// A read-only level whose values go through a one-way transformation.
public struct TransformedFetcher<Inner: CacheLevel, NewValue: Sendable>: Fetcher {
    public typealias Key = Inner.Key
    public typealias Value = NewValue

    public let inner: Inner
    @usableFromInline let forward: @Sendable (Inner.Value) async throws -> NewValue

    public init(_ inner: Inner, transform: @escaping @Sendable (Inner.Value) async throws -> NewValue) {
        self.inner = inner
        self.forward = transform
    }

    public var name: String { inner.name }

    public func get(_ key: Key) async throws -> NewValue {
        guard let value = try await getIfPresent(key) else { throw FetchError.valueNotInCache }
        return value
    }

    public func getIfPresent(_ key: Key) async throws -> NewValue? {
        guard let value = try await inner.getIfPresent(key) else { return nil }
        do { return try await forward(value) } catch {
            if error is CancellationError || error is FetchError { throw error }
            throw LevelFailure(level: inner.name, operation: .transformValue, key: key, underlying: error)
        }
    }

    public func waitForPendingWrites() async { await inner.waitForPendingWrites() }
}

extension Fetcher {
    /// A fetcher whose values go through a one-way `transformer`.
    public func transformValues<T: OneWayTransformer>(_ transformer: T) -> TransformedFetcher<Self, T.TypeOut>
    where T.TypeIn == Value {
        TransformedFetcher(self) { try await transformer.transform($0) }
    }
}
