import Logging

/// A level that counts what passes through it (see ``LevelStatistics``), times
/// gets, emits ``CacheEvent``s to observers and request traces, and logs each
/// operation at `trace` level under `strata.<name>` (when the logging system
/// gives that logger `trace` level at the time the level is made).
///
/// Back-fill writes (sets started by a composed get) are counted as
/// `backfills`/`backfillFailures`, not as sets; what a composition drops
/// because the level below reported a change made elsewhere, as
/// `invalidations`, not as removes.
///
/// **Cost of a get-hit**: one atomic add on the calling thread's counter
/// stripe, a random sampling decision, and a clock read for one get in
/// ``StatisticsCounter/latencySampleRate`` (every get when someone watches
/// events or trace logging is on). Everything else is off the hit path.
public struct InstrumentedCache<Inner: CacheLevel>: WrapperLevel {
    /// The inner level's key.
    public typealias Key = Inner.Key
    /// The inner level's value.
    public typealias Value = Inner.Value

    public let inner: Inner
    /// The counters, latencies and event stream of this level.
    public let statistics: LevelStatistics
    /// `statistics.counters` and `statistics.bus`, held here so a get reaches
    /// them in one load.
    @usableFromInline let counters: StatisticsCounter
    @usableFromInline let bus: CacheEventBus
    @usableFromInline let logger: Logger
    /// Whether `logger` logs at `trace` level, read once when the level is
    /// made (reading it per get costs more than the rest of the get's counting).
    @usableFromInline let traceLogging: Bool

    /// `inner` counted under `name`, timing one get in `latencySampleRate`
    /// (1 times every get). A level that keeps its own counters
    /// (``LevelCounterReporting``), even under wrappers or erased, has them
    /// read into every snapshot.
    public init(_ inner: Inner, name: String, latencySampleRate: Int = 16) {
        self.inner = inner
        self.statistics = LevelStatistics(
            name: name, latencySampleRate: latencySampleRate, levelCounters: levelCounterSource(of: inner))
        self.counters = statistics.counters
        self.bus = statistics.bus
        self.logger = Logger(label: "strata.\(name)")
        self.traceLogging = logger.logLevel <= .trace
    }

    public var name: String { statistics.name }

    @inlinable @inline(__always)
    public func getIfPresent(_ key: Key) async throws -> Value? {
        let (stripe, start) = getStarted()
        let value: Value?
        do { value = try await inner.getIfPresent(key) } catch {
            getFailed(key, error, start: start)
            throw error
        }
        getFinished(key, hit: value != nil, stripe: stripe, start: start)
        return value
    }

    /// A hit the level inside answers without suspending, counted (and
    /// timed, one in 16) as ``getIfPresent(_:)`` counts it; `nil` (nothing
    /// counted) on a miss, and whenever events or traces are wanted: the get
    /// that goes on counts and reports it.
    @inlinable
    public func synchronousValue(forKey key: Key) -> Value? {
        guard !watched else { return nil }
        let stripe = counters.stripe
        // Whether to time it, drawn as a get draws it but taken only by a hit:
        // a miss leaves the draw to the get that goes on (the first is timed).
        let draw = stripe.nextSample(shift: counters.sampleShift)
        let start = draw.sampled ? monotonicNanoseconds() : 0
        guard let value = inner.synchronousValue(forKey: key) else { return nil }
        stripe.take(draw)
        getFinished(key, hit: true, stripe: stripe, start: start)
        return value
    }

    @inlinable
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        let (stripe, start) = getStarted()
        let entry: CacheEntry<Value>?
        do { entry = try await inner.entry(forKey: key) } catch {
            getFailed(key, error, start: start)
            throw error
        }
        getFinished(key, hit: entry != nil, stripe: stripe, start: start)
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
    var watched: Bool { traceLogging || bus.wantsEvents }

    /// The start of a get: the calling thread's counter stripe, and the
    /// clock reading when the get is timed (else 0). The get is counted on
    /// that stripe even if it resumes on another thread (the counts are
    /// atomic; only the spreading is approximate).
    @inlinable @inline(__always)
    func getStarted() -> (CounterStripe, UInt64) {
        let stripe = counters.stripe
        return (stripe, stripe.sample(shift: counters.sampleShift) || watched ? timedGetStarted() : 0)
    }

    /// The clock reading of a timed get; a traced one first forgets any
    /// stale expiry note, so the miss it reports is this get's.
    @usableFromInline
    func timedGetStarted() -> UInt64 {
        if watched { _ = CacheContext.trace?.takeExpiredNote() }
        return monotonicNanoseconds()
    }

    /// Counts a get that answered (a hit or a miss); a timed one goes on in
    /// ``getTimed(_:hit:start:)``, off the inlined path.
    @inlinable @inline(__always)
    func getFinished(_ key: Key, hit: Bool, stripe: CounterStripe, start: UInt64) {
        if hit { stripe.hits.increment() } else { stripe.misses.increment() }
        if start != 0 { getTimed(key, hit: hit, start: start) }
    }

    @usableFromInline
    func getTimed(_ key: Key, hit: Bool, start: UInt64) {
        let elapsed = monotonicNanoseconds() &- start
        statistics.counters.getLatency.record(nanoseconds: elapsed)
        guard watched else { return }
        // Why a traced get missed: the level below noted an expired entry, or it had none.
        let reason: MissReason? = hit ? nil : CacheContext.trace.map { $0.takeExpiredNote() ? .expired : .absent }
        report(.get, hit ? .hit : .miss, key, .nanoseconds(Int64(clamping: elapsed)), nil, missReason: reason)
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
        try await measuredSet(key, backfill: false) { try await inner.set(value, forKey: key) }
    }

    @inlinable
    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await measuredSet(key, backfill: false) { try await inner.set(value, forKey: key, expiresAt: expiresAt) }
    }

    /// Counted as a back-fill (`backfills`, `backfillFailures`), not as a set.
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try await measuredSet(key, backfill: true) { try await inner.backfill(fill, forKey: key) }
    }

    /// A refresh ahead of expiry (``ResilientCache``) is a write of this
    /// level's cache: counted as a set (`sets`, `setErrors`); a decline (the
    /// level holds another value now) is reported, not counted.
    public func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws {
        try await measuredSet(key, backfill: false) { try await inner.replace(seen, with: fill, forKey: key) }
    }

    @inlinable
    func measuredSet(_ key: Key, backfill: Bool, _ write: () async throws -> Void) async throws {
        let stripe = statistics.counters.stripe
        let start = ContinuousClock.now
        do {
            try await write()
            if backfill { stripe.backfills.increment() } else { stripe.sets.increment() }
            report(.set, .stored, key, ContinuousClock.now - start, nil, backfill: backfill)
        } catch let declined as BackfillDeclined {
            // Not an error: the level holds a newer value.
            report(.set, .declined, key, ContinuousClock.now - start, nil, backfill: backfill)
            throw declined
        } catch {
            if backfill { stripe.backfillFailures.increment() } else { stripe.setErrors.increment() }
            report(.set, .error, key, ContinuousClock.now - start, error, backfill: backfill)
            throw error
        }
    }

    public func remove(_ key: Key) async throws {
        try await measuredRemove(key, outcome: .removed, count: { $0.removes.increment() }) { try await inner.remove(key) }
    }

    /// Counted as an invalidation (one for "everything"), not as a remove or clear.
    public func invalidate(_ invalidation: CacheInvalidation<Key>) async throws {
        let key = invalidation.changedKey.map { describeKey($0) } ?? ""
        try await measuredRemove(key, outcome: .invalidated, count: { $0.invalidations.increment() }) { try await inner.invalidate(invalidation) }
    }

    /// A remove or an invalidation: counted by `count` when it succeeds, in
    /// `removeErrors` when it fails, and reported either way.
    private func measuredRemove(_ key: some Sendable, outcome: CacheEvent.Outcome, count: (CounterStripe) -> Void,
                                _ body: () async throws -> Void) async throws {
        let start = ContinuousClock.now
        do {
            try await body()
            count(statistics.counters.stripe)
            report(.remove, outcome, key, ContinuousClock.now - start, nil)
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
        _ duration: Duration, _ error: (any Error)?, missReason: MissReason? = nil, backfill: Bool = false
    ) {
        let bus = statistics.bus
        if let error, !(error is CancellationError) {
            bus.recordError(operation, key: describeKey(key), error)
        }
        if traceLogging {
            logger.trace("\(operation.rawValue) \(outcome.rawValue)", metadata: [
                "key": "\(describeKey(key))", "ns": "\(duration.nanoseconds)",
            ])
        }
        guard bus.wantsEvents else { return }
        bus.emit(CacheEvent(
            level: statistics.name, operation: operation, outcome: outcome, key: describeKey(key),
            duration: duration, isBackfill: backfill, error: error.map { "\($0)" },
            missReason: missReason
        ))
    }
}

extension CacheLevel {
    /// This level with statistics and events under `name`: see ``InstrumentedCache``.
    public func instrumented(name: String) -> InstrumentedCache<Self> { InstrumentedCache(self, name: name) }
}
