/// Two levels in series: `upper` is asked first, `lower` on a miss or error.
///
/// - Get: falls through on a miss *or* any error of `upper` (availability
///   first). A value found below is returned at once and written back into
///   `upper` in the background; a failed back-fill is logged and counted
///   (``backfillFailures``, and by instrumented levels) and never fails the get.
///   All levels missing throws ``FetchError/valueNotInCache``; a real error with
///   no value anywhere throws ``LevelsFailedError`` carrying every failure.
/// - Set and remove: both levels concurrently; any failure throws
///   ``LevelsFailedError`` naming the failing levels.
/// - Clear and memory warnings reach both levels.
public struct ComposedCache<Upper: CacheLevel, Lower: CacheLevel>: CacheLevel
where Upper.Key == Lower.Key, Upper.Value == Lower.Value {
    public typealias Key = Upper.Key
    public typealias Value = Upper.Value

    public let upper: Upper
    public let lower: Lower
    @usableFromInline let backfills = BackfillTracker()

    public init(_ upper: Upper, _ lower: Lower) {
        self.upper = upper
        self.lower = lower
    }

    public var name: String { "\(upper.name) + \(lower.name)" }

    @inlinable
    public func get(_ key: Key) async throws -> Value {
        if let value = try await getIfPresent(key) { return value }
        throw FetchError.valueNotInCache
    }

    @inlinable
    public func getIfPresent(_ key: Key) async throws -> Value? {
        var failures: [LevelFailure] = []
        do {
            if let value = try await upper.getIfPresent(key) { return value }
        } catch {
            try Self.rethrowIfCancelled(error)
            failures += error.levelFailures(level: upper.name, operation: .get, key: key)
        }
        try Task.checkCancellation()
        do {
            if let value = try await lower.getIfPresent(key) {
                let upper = self.upper
                backfills.start(level: upper.name, key: key) { try await upper.set(value, forKey: key) }
                return value
            }
        } catch {
            try Self.rethrowIfCancelled(error)
            failures += error.levelFailures(level: lower.name, operation: .get, key: key)
        }
        if failures.isEmpty { return nil }
        throw LevelsFailedError(operation: .get, failures: failures)
    }

    @usableFromInline
    static func rethrowIfCancelled(_ error: any Error) throws {
        if error is CancellationError || Task.isCancelled { throw CancellationError() }
    }

    public func set(_ value: Value, forKey key: Key) async throws {
        async let top = attempt { try await upper.set(value, forKey: key) }
        async let bottom = attempt { try await lower.set(value, forKey: key) }
        try Self.collect(.set, key: key, (upper.name, await top), (lower.name, await bottom))
    }

    public func remove(_ key: Key) async throws {
        async let top = attempt { try await upper.remove(key) }
        async let bottom = attempt { try await lower.remove(key) }
        try Self.collect(.remove, key: key, (upper.name, await top), (lower.name, await bottom))
    }

    public func clear() async {
        async let top: Void = upper.clear()
        async let bottom: Void = lower.clear()
        _ = await (top, bottom)
    }

    public func onMemoryWarning() async {
        async let top: Void = upper.onMemoryWarning()
        async let bottom: Void = lower.onMemoryWarning()
        _ = await (top, bottom)
    }

    public func waitForPendingWrites() async {
        await backfills.waitUntilIdle()
        await upper.waitForPendingWrites()
        await lower.waitForPendingWrites()
    }

    /// Back-fills started by this composition (not counting nested ones).
    public var backfillsStarted: Int { backfills.counts.started }
    /// Back-fills that failed (logged at `warning` under `strata.backfill`).
    public var backfillFailures: Int { backfills.counts.failed }

    private static func collect(_ operation: CacheOperation, key: Key, _ results: (String, (any Error)?)...) throws {
        var failures: [LevelFailure] = []
        for (level, error) in results {
            if let error { failures += error.levelFailures(level: level, operation: operation, key: key) }
        }
        if failures.isEmpty { return }
        if failures.allSatisfy({ $0.underlying is CancellationError }) { throw CancellationError() }
        throw LevelsFailedError(operation: operation, failures: failures)
    }
}

/// Runs `body` and returns its error instead of throwing it.
@usableFromInline
func attempt(_ body: () async throws -> Void) async -> (any Error)? {
    do { try await body(); return nil } catch { return error }
}

extension CacheLevel {
    /// `self` in front of `next`: see ``ComposedCache``.
    public func compose<Next: CacheLevel>(_ next: Next) -> ComposedCache<Self, Next>
    where Next.Key == Key, Next.Value == Value {
        ComposedCache(self, next)
    }

    /// `lhs.compose(rhs)`.
    public static func + <Next: CacheLevel>(lhs: Self, rhs: Next) -> ComposedCache<Self, Next>
    where Next.Key == Key, Next.Value == Value {
        ComposedCache(lhs, rhs)
    }
}
