import Logging

/// A level that counts what passes through it (see ``LevelStatistics``), times
/// gets, emits ``CacheEvent``s to observers and request traces, and logs each
/// operation at `trace` level under `strata.<name>`.
///
/// Back-fill writes (sets started by a composed get) are counted as
/// `backfills`/`backfillFailures`, not as sets.
public struct InstrumentedCache<Inner: CacheLevel>: WrapperLevel {
    public typealias Key = Inner.Key
    public typealias Value = Inner.Value

    public let inner: Inner
    public let statistics: LevelStatistics
    @usableFromInline let logger: Logger

    public init(_ inner: Inner, name: String) {
        self.inner = inner
        self.statistics = LevelStatistics(name: name)
        self.logger = Logger(label: "strata.\(name)")
    }

    public var name: String { statistics.name }

    @inlinable
    public func getIfPresent(_ key: Key) async throws -> Value? {
        try await measuredGet(key) { try await inner.getIfPresent(key) }
    }

    @inlinable
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await measuredGet(key) { try await inner.entry(forKey: key) }
    }

    /// A batch counts one get per key (hits and misses apart) and records its
    /// latency once; it stays one batch for the level below.
    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        let start = ContinuousClock.now
        let found = await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency)
        let elapsed = ContinuousClock.now - start
        let hits = found.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
        statistics.gets.add(keys.count, ordering: .relaxed)
        statistics.hits.add(hits, ordering: .relaxed)
        statistics.misses.add(keys.count - hits, ordering: .relaxed)
        statistics.getLatency.record(elapsed)
        for (key, entry) in zip(keys, found) { report(.get, entry == nil ? .miss : .hit, key, elapsed, nil) }
        return found
    }

    /// Counts and times one read; `read` returns `nil` on a miss.
    @inlinable
    func measuredGet<T>(_ key: Key, _ read: () async throws -> T?) async throws -> T? {
        let stats = statistics
        stats.gets.increment()
        let start = ContinuousClock.now
        do {
            let value = try await read()
            let elapsed = ContinuousClock.now - start
            stats.getLatency.record(elapsed)
            if value == nil { stats.misses.increment() } else { stats.hits.increment() }
            report(.get, value == nil ? .miss : .hit, key, elapsed, nil)
            return value
        } catch {
            let elapsed = ContinuousClock.now - start
            if error is CancellationError {
                report(.get, .error, key, elapsed, error)
                throw error
            }
            stats.getLatency.record(elapsed)
            stats.errors.increment()
            report(.get, .error, key, elapsed, error)
            throw error
        }
    }

    @inlinable
    public func set(_ value: Value, forKey key: Key) async throws {
        try await measuredSet(key) { try await inner.set(value, forKey: key) }
    }

    @inlinable
    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await measuredSet(key) { try await inner.set(value, forKey: key, expiresAt: expiresAt) }
    }

    @inlinable
    func measuredSet(_ key: Key, _ write: () async throws -> Void) async throws {
        let stats = statistics
        let backfill = CacheContext.isBackfill
        let start = ContinuousClock.now
        do {
            try await write()
            if backfill { stats.backfills.increment() } else { stats.sets.increment() }
            report(.set, .stored, key, ContinuousClock.now - start, nil)
        } catch {
            if backfill { stats.backfillFailures.increment() } else { stats.setErrors.increment() }
            report(.set, .error, key, ContinuousClock.now - start, error)
            throw error
        }
    }

    public func remove(_ key: Key) async throws {
        let start = ContinuousClock.now
        do {
            try await inner.remove(key)
            statistics.removes.increment()
            report(.remove, .removed, key, ContinuousClock.now - start, nil)
        } catch {
            statistics.removeErrors.increment()
            report(.remove, .error, key, ContinuousClock.now - start, error)
            throw error
        }
    }

    public func clear() async {
        let start = ContinuousClock.now
        await inner.clear()
        statistics.clears.increment()
        report(.clear, .cleared, "", ContinuousClock.now - start, nil)
    }

    public func onMemoryWarning() async {
        let start = ContinuousClock.now
        await inner.onMemoryWarning()
        statistics.memoryWarnings.increment()
        report(.clear, .memoryWarning, "", ContinuousClock.now - start, nil)
    }

    @usableFromInline
    func report(
        _ operation: CacheOperation, _ outcome: CacheEvent.Outcome, _ key: some Sendable,
        _ duration: Duration, _ error: (any Error)?
    ) {
        if let error, !(error is CancellationError) {
            statistics.recordError(operation, key: describeKey(key), error)
        }
        if logger.logLevel <= .trace {
            logger.trace("\(operation.rawValue) \(outcome.rawValue)", metadata: [
                "key": "\(describeKey(key))", "ns": "\(duration.nanoseconds)",
            ])
        }
        guard statistics.wantsEvents else { return }
        statistics.emit(CacheEvent(
            level: statistics.name, operation: operation, outcome: outcome, key: describeKey(key),
            duration: duration, isBackfill: CacheContext.isBackfill, error: error.map { "\($0)" }
        ))
    }
}

extension CacheLevel {
    /// This level with statistics and events under `name`: see ``InstrumentedCache``.
    public func instrumented(name: String) -> InstrumentedCache<Self> { InstrumentedCache(self, name: name) }
}
