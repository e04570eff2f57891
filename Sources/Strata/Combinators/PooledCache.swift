import Synchronization

/// Single-flight gets: concurrent gets of one key share one execution of the
/// inner read and all receive its result.
///
/// - The look-up and the insertion of an in-flight read happen in one critical
///   section, so two callers can never both start the inner read.
/// - A waiter that is cancelled returns `CancellationError` at once; the others
///   keep waiting. The shared work is cancelled only when every waiter has gone.
/// - A finished (or cancelled) read is never reused: the next get starts a
///   fresh execution.
/// - **Writes end sharing**, as in `ReadFlights`: a set, back-fill, remove,
///   clear or memory warning through this level detaches the reads in flight
///   for the key (all keys, for clear) when it starts and when it ends; so do
///   a change the inner level reports (before the levels above hear of it)
///   and one reported above the pool (``CacheLevel/endSharingReads(_:)``).
/// - The shared read runs at the highest priority of the callers waiting on it.
/// - **No expired answer.** A get that joins a read begun before it is not
///   answered with an entry that had already expired when the get began
///   (without the pool it would have been a miss there): it reads again.
///   Expiry is judged on ``clock``: by default the clock of the first level
///   below with one (a memory, disk, key-value or Redis level, through
///   wrappers and compositions), else the system's.
public final class PooledCache<Inner: CacheLevel>: WrapperLevel where Inner.Key: Hashable {
    /// The inner level's key.
    public typealias Key = Inner.Key
    /// The inner level's value.
    public typealias Value = Inner.Value
    typealias Output = CacheEntry<Value>?

    struct Flight {
        let key: Key
        var waiters: Set<UInt64>
        var task: Task<Void, Never>?
        var priority: TaskPriority
        /// When the shared read began: a get that joins it gets data read then.
        let startedAt: ContinuousClock.Instant
    }

    struct State {
        var flights: [UInt64: Flight] = [:]
        /// The flight a new get of a key joins (detached flights are not here).
        var current: [Key: UInt64] = [:]
        /// The flight each parked waiter waits on.
        var flightOf: [UInt64: UInt64] = [:]
        var nextFlight: UInt64 = 0
        var waiters = WaiterQueue<Output>()
        var executions = 0
    }

    public let inner: Inner
    /// A get may join a read that began before it.
    public var sharesReadsInFlight: Bool { true }
    /// The clock entries' deadlines are judged on.
    public let clock: any CacheClock
    private let state = Mutex(State())
    /// The pool's subscription to `inner`'s changes, for as long as it lives.
    private let subscription = Mutex<CacheSubscription?>(nil)

    /// Registers with `inner` at once, before anything above can: a change
    /// it reports ends the sharing of reads that began before it, whether or
    /// not anything above listens (a pool can be the top of a stack), and
    /// before the listeners above drop the key.
    public init(_ inner: Inner, clock: (any CacheClock)? = nil) {
        self.inner = inner
        self.clock = clock ?? levelClock(of: inner) ?? SystemClock()
        let subscription = inner.subscribe { [weak self] change in self?.detach(change.invalidation.changedKey) }
        self.subscription.withLock { $0 = subscription }
    }

    /// How many times the inner read has been started.
    package var executions: Int { state.withLock { $0.executions } }
    /// Callers waiting on the read a new get of `key` would join (0 when none).
    package func waiterCount(for key: Key) -> Int {
        state.withLock { state in state.current[key].flatMap { state.flights[$0]?.waiters.count } ?? 0 }
    }
    /// Reads in flight right now (joinable or detached).
    package var inFlightCount: Int { state.withLock { $0.flights.count } }
    /// Waiter ids still tracked (0 when nobody waits); for tests.
    package var trackedWaiters: Int { state.withLock { $0.waiters.trackedCount } }

    public func getIfPresent(_ key: Key) async throws -> Value? {
        try await entry(forKey: key)?.value
    }

    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        let priority = Task.currentPriority
        let readStart = CacheContext.readStart
        // A read that began before this get may carry an entry that expired
        // before it: not this get's answer. After three, a miss.
        for _ in 0..<3 {
            let arrival = clock.now()
            let entry = try await suspendAsWaiter(
                reserve: { state.withLock { $0.waiters.reserve() } },
                arrive: { id, continuation in arrive(key: key, id: id, priority: priority, readStart: readStart, continuation) },
                cancel: { [self] id in leave(key: key, id: id) }
            )
            guard let deadline = entry?.expiresAt, deadline <= arrival else { return entry }
        }
        return nil
    }

    /// Batches pass straight through (they are not shared with single gets).
    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency)
    }

    private enum Joined {
        case cancelled
        case waiting(escalate: Task<Void, Never>?)
        case started(UInt64)
    }

    private func arrive(
        key: Key, id: UInt64, priority: TaskPriority, readStart: ReadStart?,
        _ continuation: WaiterQueue<Output>.Continuation
    ) -> WaiterArrival<Output> {
        let joined = state.withLock { state -> Joined in
            guard state.waiters.park(id, continuation) else { return .cancelled }
            if let flightID = state.current[key] {
                state.flights[flightID]!.waiters.insert(id)
                state.flightOf[id] = flightID
                // The answer comes from a read older than this get: a composition above
                // judges its back-fill by that read's age (see ``CacheContext/readStart``).
                readStart?.moveBack(to: state.flights[flightID]!.startedAt)
                guard priority > state.flights[flightID]!.priority else { return .waiting(escalate: nil) }
                state.flights[flightID]!.priority = priority
                return .waiting(escalate: state.flights[flightID]!.task)
            }
            state.nextFlight += 1
            state.executions += 1
            state.flights[state.nextFlight] = Flight(key: key, waiters: [id], task: nil, priority: priority,
                                                      startedAt: ContinuousClock.now)
            state.current[key] = state.nextFlight
            state.flightOf[id] = state.nextFlight
            return .started(state.nextFlight)
        }
        switch joined {
        case .cancelled:
            return .resume(continuation, .failure(CancellationError()))
        case .waiting(let escalate):
            if let escalate { escalate.escalatePriority(to: priority) }
        case .started(let flightID):
            // The task is created after the critical section, never under the lock.
            let task = Task(priority: priority) { [inner] in
                let result: Result<Output, any Error>
                do { result = .success(try await inner.entry(forKey: key)) } catch { result = .failure(error) }
                self.complete(flightID, result)
            }
            let orphaned = state.withLock { state -> Bool in
                guard state.flights[flightID] != nil else { return true }  // finished, or every waiter left
                state.flights[flightID]!.task = task
                return false
            }
            if orphaned { task.cancel() }
        }
        return .parked
    }

    private func complete(_ flightID: UInt64, _ result: Result<Output, any Error>) {
        let waiters = state.withLock { state -> [WaiterQueue<Output>.Continuation] in
            guard let flight = state.flights.removeValue(forKey: flightID) else { return [] }
            if state.current[flight.key] == flightID { state.current[flight.key] = nil }
            return flight.waiters.compactMap { id in
                state.flightOf[id] = nil
                return state.waiters.take(id)
            }
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    private func leave(key: Key, id: UInt64) -> WaiterQueue<Output>.Continuation? {
        let (waiter, orphaned) = state.withLock { state -> (WaiterQueue<Output>.Continuation?, Task<Void, Never>?) in
            let waiter = state.waiters.cancel(id)
            guard waiter != nil, let flightID = state.flightOf.removeValue(forKey: id) else { return (waiter, nil) }
            state.flights[flightID]!.waiters.remove(id)
            guard state.flights[flightID]!.waiters.isEmpty else { return (waiter, nil) }
            let flight = state.flights.removeValue(forKey: flightID)!
            if state.current[key] == flightID { state.current[key] = nil }
            return (waiter, flight.task)
        }
        orphaned?.cancel()
        return waiter
    }

    /// Detaches the reads in flight for the key (every key for `.all`): the
    /// next get starts a fresh read. Reads below this pool end theirs too.
    public func endSharingReads(_ invalidation: CacheInvalidation<Key>) {
        detach(invalidation.changedKey)
        inner.endSharingReads(invalidation)
    }

    /// New gets of `key` (every key when `nil`) start a fresh read.
    private func detach(_ key: Key?) {
        state.withLock { state in
            if let key { state.current[key] = nil } else { state.current.removeAll() }
        }
    }

    public func set(_ value: Value, forKey key: Key) async throws {
        detach(key)
        defer { detach(key) }
        try await inner.set(value, forKey: key)
    }

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        detach(key)
        defer { detach(key) }
        try await inner.set(value, forKey: key, expiresAt: expiresAt)
    }

    /// Reads in flight began before: later gets start their own.
    public func lostCoherence() {
        detach(nil)
        inner.lostCoherence()
    }

    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        detach(key)
        defer { detach(key) }
        try await inner.backfill(fill, forKey: key)
    }

    public func remove(_ key: Key) async throws {
        detach(key)
        defer { detach(key) }
        try await inner.remove(key)
    }

    public func clear() async {
        detach(nil)
        await inner.clear()
        detach(nil)
    }

    public func onMemoryWarning() async {
        detach(nil)
        await inner.onMemoryWarning()
        detach(nil)
    }
}

extension CacheLevel where Key: Hashable {
    /// Single-flight gets over this level (see ``PooledCache``); `clock`
    /// judges the deadlines of shared answers (default: the levels' own).
    public func pooled(clock: (any CacheClock)? = nil) -> PooledCache<Self> { PooledCache(self, clock: clock) }
}

/// The clock of the first level with one in `level`, looking through
/// wrappers and the upper, then the lower, side of compositions.
func levelClock(of level: any CacheLevel) -> (any CacheClock)? {
    if let expirable = level as? any ExpirableCacheLevel { return expirable.clock }
    if let wrapper = level as? any WrapperLevel { return levelClock(of: wrapper.inner) }
    if let composed = level as? any ComposedLevels { return levelClock(of: composed.upperLevel) ?? levelClock(of: composed.lowerLevel) }
    return nil
}
