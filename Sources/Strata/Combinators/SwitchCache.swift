/// Which lane a key goes to.
public enum CacheLevelSwitchResult: Sendable, Equatable {
    /// The key goes to ``SwitchCache/cacheA``.
    case cacheA
    /// The key goes to ``SwitchCache/cacheB``.
    case cacheB
}

/// Two lanes chosen per key. Gets go to the chosen lane. A set goes to the
/// chosen lane and drops the key from the other one, and a remove reaches
/// both, so a choice that changes over time never brings back a value that
/// was overwritten or removed while the key went to the other lane. Clear and
/// memory warnings reach both.
public struct SwitchCache<A: CacheLevel, B: CacheLevel>: CacheLevel
where A.Key == B.Key, A.Value == B.Value {
    /// The key both lanes share.
    public typealias Key = A.Key
    /// The value both lanes share.
    public typealias Value = A.Value

    /// The lane for keys the switch sends to ``CacheLevelSwitchResult/cacheA``.
    public let cacheA: A
    /// The lane for keys the switch sends to ``CacheLevelSwitchResult/cacheB``.
    public let cacheB: B
    @usableFromInline let choose: @Sendable (Key) -> CacheLevelSwitchResult

    /// Two lanes; `switchClosure` chooses one for each key, on every operation.
    public init(cacheA: A, cacheB: B, switchClosure: @escaping @Sendable (Key) -> CacheLevelSwitchResult) {
        self.cacheA = cacheA
        self.cacheB = cacheB
        self.choose = switchClosure
    }

    public var name: String { "switch(\(cacheA.name) | \(cacheB.name))" }

    @inlinable public func getIfPresent(_ key: Key) async throws -> Value? {
        switch choose(key) {
        case .cacheA: try await cacheA.getIfPresent(key)
        case .cacheB: try await cacheB.getIfPresent(key)
        }
    }

    @inlinable public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        switch choose(key) {
        case .cacheA: try await cacheA.entry(forKey: key)
        case .cacheB: try await cacheB.entry(forKey: key)
        }
    }

    /// Each lane answers its own keys in one batch.
    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        let lanes = keys.indices.map { choose(keys[$0]) }
        let aIndices = keys.indices.filter { lanes[$0] == .cacheA }
        let bIndices = keys.indices.filter { lanes[$0] == .cacheB }
        async let a = cacheA.entries(forKeys: aIndices.map { keys[$0] }, maxConcurrency: maxConcurrency)
        async let b = cacheB.entries(forKeys: bIndices.map { keys[$0] }, maxConcurrency: maxConcurrency)
        var results = [CacheEntry<Value>?](repeating: nil, count: keys.count)
        for (position, index) in aIndices.enumerated() { results[index] = await a[position] }
        for (position, index) in bIndices.enumerated() { results[index] = await b[position] }
        return results
    }

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        switch choose(key) {
        case .cacheA: try await setA(key, { try await cacheA.set(value, forKey: key, expiresAt: expiresAt) })
        case .cacheB: try await setB(key, { try await cacheB.set(value, forKey: key, expiresAt: expiresAt) })
        }
    }

    public func set(_ value: Value, forKey key: Key) async throws {
        switch choose(key) {
        case .cacheA: try await setA(key, { try await cacheA.set(value, forKey: key) })
        case .cacheB: try await setB(key, { try await cacheB.set(value, forKey: key) })
        }
    }

    /// A back-fill goes to the key's lane alone: it replaces nothing, and
    /// writes and removes already keep the other lane free of older values.
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        switch choose(key) {
        case .cacheA: try await cacheA.backfill(fill, forKey: key)
        case .cacheB: try await cacheB.backfill(fill, forKey: key)
        }
    }

    public func remove(_ key: Key) async throws {
        try await both(.remove, key, { try await cacheA.remove(key) }, { try await cacheB.remove(key) })
    }

    /// A set through lane A, dropping the key from lane B.
    private func setA(_ key: Key, _ write: @escaping @Sendable () async throws -> Void) async throws {
        try await both(.set, key, { try await cleaned(write, lane: cacheA, key) }, { try await cacheB.remove(key) })
    }

    private func setB(_ key: Key, _ write: @escaping @Sendable () async throws -> Void) async throws {
        try await both(.set, key, { try await cacheA.remove(key) }, { try await cleaned(write, lane: cacheB, key) })
    }

    /// Runs a lane's set; if it fails, removes the lane's entry for the key
    /// (best effort), so the failure this switch reports has left no older
    /// value behind, as a composition's does.
    private func cleaned<Lane: CacheLevel>(
        _ write: @Sendable () async throws -> Void, lane: Lane, _ key: Key
    ) async throws where Lane.Key == Key {
        do { try await write() } catch {
            if !(error is BackfillDeclined || error is CancellationError) {
                // No part of the write: see ``ComposedCache``'s clean-up.
                _ = await CacheContext.outsideWrite { await attempt { try await lane.remove(key) } }
            }
            throw error
        }
    }

    /// Runs a write on each lane concurrently. A lone failure is rethrown as
    /// it is, two are a ``LevelsFailedError`` naming both lanes; a declined
    /// back-fill (``BackfillDeclined``) is rethrown as such either way.
    private func both(
        _ operation: CacheOperation, _ key: Key,
        _ onA: @escaping @Sendable () async throws -> Void, _ onB: @escaping @Sendable () async throws -> Void
    ) async throws {
        async let a = attempt(onA)
        async let b = attempt(onB)
        let (errorA, errorB) = await (a, b)
        if errorA is BackfillDeclined || errorB is BackfillDeclined { throw BackfillDeclined() }
        var failures: [LevelFailure] = []
        if let errorA { failures += errorA.levelFailures(level: cacheA.name, operation: operation, key: key) }
        if let errorB { failures += errorB.levelFailures(level: cacheB.name, operation: operation, key: key) }
        if failures.isEmpty { return }
        if failures.allSatisfy({ $0.underlying is CancellationError }) { throw CancellationError() }
        if failures.count == 1, let only = errorA ?? errorB { throw only }
        throw LevelsFailedError(operation: operation, failures: failures)
    }

    public func clear() async {
        async let a: Void = cacheA.clear()
        async let b: Void = cacheB.clear()
        _ = await (a, b)
    }

    public func onMemoryWarning() async {
        async let a: Void = cacheA.onMemoryWarning()
        async let b: Void = cacheB.onMemoryWarning()
        _ = await (a, b)
    }

    public func subscribe(_ listener: @escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription {
        CacheSubscription([cacheA.subscribe(listener), cacheB.subscribe(listener)])
    }

    public var sharesReadsInFlight: Bool { cacheA.sharesReadsInFlight || cacheB.sharesReadsInFlight }

    public func lostCoherence() {
        cacheA.lostCoherence()
        cacheB.lostCoherence()
    }

    public func endSharingReads(_ invalidation: CacheInvalidation<Key>) {
        cacheA.endSharingReads(invalidation)
        cacheB.endSharingReads(invalidation)
    }

    public func waitForPendingWrites() async {
        await cacheA.waitForPendingWrites()
        await cacheB.waitForPendingWrites()
    }
}

/// Lanes: routes each key to `cacheA` or `cacheB` (Carlos's free function).
public func switchLevels<A: CacheLevel, B: CacheLevel>(
    cacheA: A,
    cacheB: B,
    switchClosure: @escaping @Sendable (A.Key) -> CacheLevelSwitchResult
) -> SwitchCache<A, B> where A.Key == B.Key, A.Value == B.Value {
    SwitchCache(cacheA: cacheA, cacheB: cacheB, switchClosure: switchClosure)
}
