import Logging

/// A level that counts what passes through it (see ``LevelStatistics``), times
/// gets, emits ``CacheEvent``s to observers and request traces, and logs each
/// operation at `trace` level under `strata.<name>`.
///
/// Back-fill writes (sets started by a composed get) are counted as
/// `backfills`/`backfillFailures`, not as sets.
///
/// **Cost of a get-hit**: one atomic add on the calling thread's counter
/// stripe, a random sampling decision, and a clock read for one get in
/// ``StatisticsCounter/latencySampleRate`` (every get when someone watches
/// events or trace logging is on). Everything else is off the hit path.
public struct InstrumentedCache<Inner: CacheLevel>: WrapperLevel {
    public typealias Key = Inner.Key
    public typealias Value = Inner.Value

    public let inner: Inner
    public let statistics: LevelStatistics
    @usableFromInline let logger: Logger

    /// `inner` counted under `name`, timing one get in `latencySampleRate`
    /// (1 times every get). A level that keeps its own counters
    /// (``LevelCounterReporting``), even under wrappers or erased, has them
    /// read into every snapshot.
    public init(_ inner: Inner, name: String, latencySampleRate: Int = 16) {
        self.inner = inner
        self.statistics = LevelStatistics(
            name: name, latencySampleRate: latencySampleRate, levelCounters: levelCounterSource(of: inner))
        self.logger = Logger(label: "strata.\(name)")
    }

    public var name: String { statistics.name }

    @inlinable
    public func getIfPresent(_ key: Key) async throws -> Value? {
        let start = getStarted()
        let value: Value?
        do { value = try await inner.getIfPresent(key) } catch {
            getFailed(key, error, start: start)
            throw error
        }
        getFinished(key, hit: value != nil, start: start)
        return value
    }

    @inlinable
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        let start = getStarted()
        let entry: CacheEntry<Value>?
        do { entry = try await inner.entry(forKey: key) } catch {
            getFailed(key, error, start: start)
            throw error
        }
        getFinished(key, hit: entry != nil, start: start)
        return entry
    }

    /// A batch counts one get per key (hits and misses apart) and records its
    /// latency once; it stays one batch for the level below.
    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        let start = ContinuousClock.now
        let found = await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency)
        let elapsed = ContinuousClock.now - start
        let hits = found.reduce(0) { $0 + ($1 == nil ? 0 : 1) }
        let counters = statistics.counters
        counters.stripe.hits.add(hits, ordering: .relaxed)
        counters.stripe.misses.add(keys.count - hits, ordering: .relaxed)
        counters.getLatency.record(elapsed)
        for (key, entry) in zip(keys, found) { report(.get, entry == nil ? .miss : .hit, key, elapsed, nil) }
        return found
    }
    /// Whether this get's details go anywhere (events, traces, trace logs);
    /// such gets are always timed.
    @usableFromInline
    var watched: Bool { statistics.bus.wantsEvents || logger.logLevel <= .trace }

    /// The start of a get: its clock reading when it is timed, else 0.
    @inlinable @inline(__always)
    func getStarted() -> UInt64 {
        let counters = statistics.counters
        return counters.stripe.sample(shift: counters.sampleShift) || watched ? monotonicNanoseconds() : 0
    }

    /// Counts a get that answered (a hit or a miss); a timed one goes on in
    /// ``getTimed(_:hit:start:)``, off the inlined path.
    @inlinable @inline(__always)
    func getFinished(_ key: Key, hit: Bool, start: UInt64) {
        let stripe = statistics.counters.stripe
        if hit { stripe.hits.increment() } else { stripe.misses.increment() }
        if start != 0 { getTimed(key, hit: hit, start: start) }
    }

    @usableFromInline
    func getTimed(_ key: Key, hit: Bool, start: UInt64) {
        let elapsed = monotonicNanoseconds() &- start
        statistics.counters.getLatency.record(nanoseconds: elapsed)
        if watched { report(.get, hit ? .hit : .miss, key, .nanoseconds(Int64(clamping: elapsed)), nil) }
    }

    /// The error path of a get: cancelled gets are counted apart from errors.
    @usableFromInline
    func getFailed(_ key: Key, _ error: any Error, start: UInt64) {
        let counters = statistics.counters
        let elapsed = start == 0 ? 0 : monotonicNanoseconds() &- start
        if error is CancellationError {
            counters.stripe.cancelledGets.increment()
        } else {
            counters.stripe.errors.increment()
            if start != 0 { counters.getLatency.record(nanoseconds: elapsed) }
        }
        report(.get, .error, key, .nanoseconds(Int64(clamping: elapsed)), error)
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
        let stripe = statistics.counters.stripe
        let backfill = CacheContext.isBackfill
        let start = ContinuousClock.now
        do {
            try await write()
            if backfill { stripe.backfills.increment() } else { stripe.sets.increment() }
            report(.set, .stored, key, ContinuousClock.now - start, nil)
        } catch {
            if backfill { stripe.backfillFailures.increment() } else { stripe.setErrors.increment() }
            report(.set, .error, key, ContinuousClock.now - start, error)
            throw error
        }
    }

    public func remove(_ key: Key) async throws {
        let start = ContinuousClock.now
        do {
            try await inner.remove(key)
            statistics.counters.stripe.removes.increment()
            report(.remove, .removed, key, ContinuousClock.now - start, nil)
        } catch {
            statistics.counters.stripe.removeErrors.increment()
            report(.remove, .error, key, ContinuousClock.now - start, error)
            throw error
        }
    }

    public func clear() async {
        let start = ContinuousClock.now
        await inner.clear()
        statistics.counters.stripe.clears.increment()
        report(.clear, .cleared, "", ContinuousClock.now - start, nil)
    }

    public func onMemoryWarning() async {
        let start = ContinuousClock.now
        await inner.onMemoryWarning()
        statistics.counters.stripe.memoryWarnings.increment()
        report(.clear, .memoryWarning, "", ContinuousClock.now - start, nil)
    }

    @usableFromInline
    func report(
        _ operation: CacheOperation, _ outcome: CacheEvent.Outcome, _ key: some Sendable,
        _ duration: Duration, _ error: (any Error)?
    ) {
        let bus = statistics.bus
        if let error, !(error is CancellationError) {
            bus.recordError(operation, key: describeKey(key), error)
        }
        if logger.logLevel <= .trace {
            logger.trace("\(operation.rawValue) \(outcome.rawValue)", metadata: [
                "key": "\(describeKey(key))", "ns": "\(duration.nanoseconds)",
            ])
        }
        guard bus.wantsEvents else { return }
        bus.emit(CacheEvent(
            level: statistics.name, operation: operation, outcome: outcome, key: describeKey(key),
            duration: duration, isBackfill: CacheContext.isBackfill, error: error.map { "\($0)" }
        ))
    }
}

extension CacheLevel {
    /// This level with statistics and events under `name`: see ``InstrumentedCache``.
    public func instrumented(name: String) -> InstrumentedCache<Self> { InstrumentedCache(self, name: name) }
}
