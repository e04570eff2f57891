/// A read-only level whose values go through a one-way transformation.
public struct TransformedFetcher<Inner: CacheLevel, NewValue: Sendable>: Fetcher {
    /// The inner level's key.
    public typealias Key = Inner.Key
    /// The transformed value.
    public typealias Value = NewValue

    /// The level whose values are transformed.
    public let inner: Inner
    @usableFromInline let forward: @Sendable (Inner.Value) async throws -> NewValue

    /// `inner` read through `transform`.
    public init(_ inner: Inner, transform: @escaping @Sendable (Inner.Value) async throws -> NewValue) {
        self.inner = inner
        self.forward = transform
    }

    public var name: String { inner.name }
    public func waitForPendingWrites() async { await inner.waitForPendingWrites() }
    public func subscribe(_ listener: @escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription {
        inner.subscribe(listener)
    }
    public var sharesReadsInFlight: Bool { inner.sharesReadsInFlight }
    public func lostCoherence() { inner.lostCoherence() }
    public func endSharingReads(_ invalidation: CacheInvalidation<Key>) { inner.endSharingReads(invalidation) }

    public func getIfPresent(_ key: Key) async throws -> NewValue? {
        guard let value = try await inner.getIfPresent(key) else { return nil }
        return try await transformedOrMiss(inner.name, .transformValue, key: key) { try await forward(value) }
    }

    public func entry(forKey key: Key) async throws -> CacheEntry<NewValue>? {
        guard let entry = try await inner.entry(forKey: key) else { return nil }
        let value = try await transformedOrMiss(inner.name, .transformValue, key: key) { try await forward(entry.value) }
        return value.map { CacheEntry(value: $0, expiresAt: entry.expiresAt) }
    }
}

extension Fetcher {
    /// A fetcher whose values go through a one-way `transformer`.
    public func transformValues<T: OneWayTransformer>(_ transformer: T) -> TransformedFetcher<Self, T.TypeOut>
    where T.TypeIn == Value {
        TransformedFetcher(self) { try await transformer.transform($0) }
    }
}
