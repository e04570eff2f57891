import Synchronization

// Design note: what a cache in front of a failing origin may answer.
//
// A `ResilientCache` wraps a level or a whole stack (usually the stack, at
// the top) and changes only what a get answers when the levels below fail
// or are slow; it never changes what a successful get answers.
//
// Fail-safe (`maxStale`). Every answer a get sees is recorded as the key's
// last known value (`LastKnownValues`: bounded, ordered against writes, see
// its note). A get whose levels throw answers that value if it was seen no
// more than `maxStale` ago, marked stale (a `stale` event in the trace,
// `staleAnswers` in the statistics) and expiring at once, so that a level
// above that back-fills it keeps nothing. The value is never one this
// cache knows to be replaced: a set records the new value, a remove, a
// clear, a miss and a change reported from below (another process, a
// flushed store) forget it; a store's report of a write this cache caused
// (its sets, the back-fills and loads of its reads: tagged with its writer
// id, as a stack tags its own) is no such change. Losing contact with a
// store forgets nothing: nobody is known to have changed anything, and an
// outage is exactly when the fallback is wanted.
//
// Timeouts. With `softTimeout`, a get that has a fallback and is not
// answered by then answers the fallback; the read runs on in the
// background and what it finds lands as usual (back-fills, the record).
// With `hardTimeout`, a get not answered by then answers the fallback if
// there is one, else throws a `CacheTimeout` naming the level and key; the
// read runs on too. A hit the top level answers without suspending (a
// memory level) never starts a timer.
//
// Refresh ahead (`refreshAhead(at:)`, on the loading gets of a stack). A hit
// whose entry is past that fraction of its TTL (counted from when this cache
// loaded the key, if it remembers: a level with a shorter TTL caps its
// copy's deadline, which would make every hit due) starts one background load
// per key, which replaces the value the hit saw in every level
// (`CacheLevel.replace`: a shared store only if it still holds that value),
// ordered by the stack as a write and dropped if a write or a change
// reported from below touched the key since it began. The next gets keep
// hitting meanwhile, and after the old deadline the new value is there: no
// miss at expiry. It is a write of this cache: the last known value follows.
// The hit's request trace notes it (a `refreshStarted` event); the refresh
// runs outside the request (its load and writes are in no trace).

/// A level or stack that answers the last known value when the levels
/// below fail or are slow, and refreshes entries before they expire (see
/// ``CacheLevel/failSafe(maxStale:softTimeout:hardTimeout:capacity:)``).
public final class ResilientCache<Inner: CacheLevel>: WrapperLevel where Inner.Key: Hashable {
    /// The inner level's key.
    public typealias Key = Inner.Key
    /// The inner level's value.
    public typealias Value = Inner.Value

    public let inner: Inner
    /// Fail-safe, timeouts and refresh-ahead, as given.
    public let options: ResilienceOptions
    /// Last known values; `nil` when fail-safe is off.
    @usableFromInline let known: LastKnownValues<Key, Value>?
    @usableFromInline let clock: any CacheClock
    /// The inner level's synchronous entry read, taken once (as ``CacheLevel/normalize()`` does).
    @usableFromInline let synchronousEntry: (@Sendable (Key) -> CacheEntry<Value>?)?
    let counters = ResilienceCounters()
    /// Refreshes ahead of expiry under way, and their keys.
    let refreshes = BackfillTracker(failure: "refresh ahead failed")
    let refreshing = Mutex<Set<Key>>([])
    /// When each key was last loaded here, with refresh ahead on: it is judged from that.
    let loadTimes: LoadTimes<Key>?
    /// Why the options cannot be used (a refresh-ahead fraction that is not a
    /// number): every loading get throws it.
    let optionsFailure: ResilienceError?
    /// `optionsFailure == nil`, for the hit path (a plain load, no copy of the error).
    @usableFromInline let optionsUsable: Bool
    private let subscription = Mutex<CacheSubscription?>(nil)
    /// Tags the writes its reads and writes cause below (back-fills, loads):
    /// a store's report of one is no change made by others.
    let writer = StackWriters.next()

    /// `inner` answering and refreshing per `options`, on the clock of the
    /// first level below with one (else the system's).
    public init(_ inner: Inner, options: ResilienceOptions) {
        self.inner = inner
        self.options = options
        self.clock = levelClock(of: inner) ?? SystemClock()
        self.synchronousEntry = inner.synchronousRead?.entry
        self.known = options.maxStale.map { _ in LastKnownValues(capacity: options.capacity) }
        self.loadTimes = options.refreshAhead.map { _ in LoadTimes(capacity: options.capacity) }
        self.optionsFailure = options.refreshAhead.flatMap { $0.isNaN ? .invalidRefreshAhead("\($0)") : nil }
        self.optionsUsable = optionsFailure == nil
        guard known != nil else { return }
        let writer = self.writer
        let subscription = inner.subscribe { [weak self] change in
            if !change.isWrite(by: writer) { self?.forget(change.invalidation) }
        }
        self.subscription.withLock { $0 = subscription }
    }

    /// What this level has done so far.
    public var resilienceStatistics: ResilienceStatistics {
        counters.snapshot(knownValues: known?.count ?? 0, refreshes: refreshes.counts)
    }

    /// Also waits for the refreshes ahead started before.
    public func waitForPendingWrites() async {
        await refreshes.waitUntilIdle()
        await inner.waitForPendingWrites()
    }

    // MARK: Reads

    @inlinable
    public func getIfPresent(_ key: Key) async throws -> Value? {
        try await entry(forKey: key)?.value
    }

    @inlinable
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        // The ticket before the read: a set between the two must void it.
        let ticket = known?.beginRead(key)
        // The entry, not only the value: a level above back-fills its deadline.
        if let read = synchronousEntry {
            if let entry = read(key) {
                known?.settle(entry.value, forKey: key, ticket: ticket, at: clock.now())
                return entry
            }
        } else if let value = inner.synchronousValue(forKey: key) {  // a level with a value read only
            known?.settle(value, forKey: key, ticket: ticket, at: clock.now())
            return CacheEntry(value: value)
        }
        return try await guarded(key) { [inner] in try await inner.entry(forKey: key) }
    }

    public var synchronousRead: SynchronousRead<Key, Value>? { known == nil ? inner.synchronousRead : nil }

    public func synchronousValue(forKey key: Key) -> Value? { known == nil ? inner.synchronousValue(forKey: key) : nil }

    /// Batches are best effort below (a failure is a miss): they are passed
    /// on, what they find is recorded, and what they miss is not forgotten
    /// (it may have failed) nor answered stale.
    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        guard let known else { return await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency) }
        let tickets = keys.map { known.beginRead($0) }
        let found = await CacheContext.writing(as: writer) { await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency) }
        let now = clock.now()
        for (index, entry) in found.enumerated() where entry != nil {
            known.settle(entry?.value, forKey: keys[index], ticket: tickets[index], at: now)
        }
        return found
    }

    /// Runs `read` under the options: records what it finds, answers the
    /// last known value when it fails or is late, throws past the hard timeout.
    @usableFromInline
    func guarded(_ key: Key, _ read: @escaping @Sendable () async throws -> CacheEntry<Value>?) async throws -> CacheEntry<Value>? {
        let ticket = known?.beginRead(key)
        let settled: @Sendable () async throws -> CacheEntry<Value>? = { [known, clock, writer] in
            let entry = try await CacheContext.writing(as: writer) { try await read() }
            known?.settle(entry?.value, forKey: key, ticket: ticket, at: clock.now())
            return entry
        }
        guard options.softTimeout != nil || options.hardTimeout != nil else {
            do { return try await settled() } catch { return try fallback(for: key, after: error) }
        }
        let task = Task { try await settled() }
        var waited = Duration.zero
        if let soft = options.softTimeout, lastKnown(key) != nil, soft < (options.hardTimeout ?? .seconds(Int64.max)) {
            switch await wait(for: task, atMost: soft) {
            case .finished(let result): return try answer(result, for: key)
            case .cancelled: throw CancellationError()
            case .timedOut:
                if let stale = lastKnown(key) {
                    counters.softTimeouts.add(1, ordering: .relaxed)
                    return staleAnswer(stale, for: key)
                }
                waited = soft
            }
        }
        switch await wait(for: task, atMost: options.hardTimeout.map { $0 - waited }) {
        case .finished(let result): return try answer(result, for: key)
        case .cancelled: throw CancellationError()
        case .timedOut:
            counters.hardTimeouts.add(1, ordering: .relaxed)
            if let stale = lastKnown(key) { return staleAnswer(stale, for: key) }
            let timeout = options.hardTimeout ?? .zero
            CacheContext.trace?.append(CacheEvent(level: name, operation: .get, outcome: .timedOut, key: describeKey(key),
                                                  duration: timeout, isBackfill: false, error: nil))
            throw LevelFailure(level: name, operation: .get, key: key, underlying: CacheTimeout(after: timeout))
        }
    }

    private func answer(_ result: Result<CacheEntry<Value>?, any Error>, for key: Key) throws -> CacheEntry<Value>? {
        switch result {
        case .success(let entry): return entry
        case .failure(let error): return try fallback(for: key, after: error)
        }
    }

    /// The last known value for a get that failed with `error`, else `error`.
    private func fallback(for key: Key, after error: any Error) throws -> CacheEntry<Value>? {
        if error is CancellationError { throw error }
        guard let stale = lastKnown(key) else { throw error }
        return staleAnswer(stale, for: key)
    }

    private func lastKnown(_ key: Key) -> LastKnownValues<Key, Value>.Known? {
        guard let known, let maxStale = options.maxStale else { return nil }
        return known.value(forKey: key, maxStale: maxStale, now: clock.now())
    }

    /// `stale` as an answer: counted, traced, and already expired (a level
    /// above that back-fills it keeps nothing).
    private func staleAnswer(_ stale: LastKnownValues<Key, Value>.Known, for key: Key) -> CacheEntry<Value> {
        counters.staleAnswers.add(1, ordering: .relaxed)
        let now = clock.now()
        CacheContext.trace?.append(CacheEvent(
            level: name, operation: .get, outcome: .stale, key: describeKey(key),
            duration: .nanoseconds(max(0, now.nanosecondsSince1970 - stale.seenAt.nanosecondsSince1970)),
            isBackfill: false, error: nil))
        return CacheEntry(value: stale.value, expiresAt: now)
    }

    // MARK: Writes

    public func set(_ value: Value, forKey key: Key) async throws {
        try await writing(value, key) { [inner] in try await inner.set(value, forKey: key) }
    }

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await writing(value, key) { [inner] in try await inner.set(value, forKey: key, expiresAt: expiresAt) }
    }

    public func remove(_ key: Key) async throws {
        try await writing(nil, key) { [inner] in try await inner.remove(key) }
    }

    /// A failed write records nothing: the levels may hold either value.
    private func writing(_ value: Value?, _ key: Key, _ write: () async throws -> Void) async throws {
        loadTimes?.forget(key)
        guard let known else { return try await write() }
        let ticket = known.beginWrite(key)
        do {
            try await CacheContext.writing(as: writer) { try await write() }
        } catch {
            known.endWrite(nil, forKey: key, ticket: ticket, at: clock.now())
            throw error
        }
        known.endWrite(value, forKey: key, ticket: ticket, at: clock.now())
    }

    public func clear() async {
        loadTimes?.forgetAll()
        known?.forgetAll()
        await inner.clear()
        known?.forgetAll()
    }

    /// Ordered as the remove or clear it is: a read overlapping it records nothing.
    public func invalidate(_ invalidation: CacheInvalidation<Key>) async throws {
        switch invalidation {
        case .key(let key): try await writing(nil, key) { [inner] in try await inner.invalidate(invalidation) }
        case .all:
            loadTimes?.forgetAll()
            known?.forgetAll()
            defer { known?.forgetAll() }
            try await inner.invalidate(invalidation)
        case .contactLost: try await inner.invalidate(invalidation)
        }
    }

    /// The last known values are released with the rest: memory first.
    public func onMemoryWarning() async {
        known?.forgetAll()
        await inner.onMemoryWarning()
    }

    /// A change reported from below: forgotten, unless only contact was lost.
    private func forget(_ invalidation: CacheInvalidation<Key>) {
        switch invalidation {
        case .key(let key): known?.forget(key)
        case .all: known?.forgetAll()
        case .contactLost: break
        }
    }
}

/// What a ``ResilientCache`` does when the levels below fail or are slow.
public struct ResilienceOptions: Sendable, Equatable {
    /// How long after it was seen a value may still be answered when the
    /// levels fail or time out (`nil`: fail-safe off).
    public var maxStale: Duration?
    /// After this long, a get with a last known value answers it and lets the read finish in the background.
    public var softTimeout: Duration?
    /// After this long, a get answers its last known value or throws a
    /// ``LevelFailure`` whose cause is a ``CacheTimeout``.
    public var hardTimeout: Duration?
    /// The fraction of a TTL after which a hit refreshes the entry in the background (loading gets).
    public var refreshAhead: Double?
    /// Last known values kept at most (and, with refresh ahead, load times).
    public var capacity: Int

    /// Options with everything off but what is given; `refreshAhead` is
    /// clamped to 0...1 (one that is not a number makes every loading get
    /// throw ``ResilienceError/invalidRefreshAhead(_:)``).
    public init(maxStale: Duration? = nil, softTimeout: Duration? = nil, hardTimeout: Duration? = nil,
                refreshAhead: Double? = nil, capacity: Int = 10_000) {
        self.maxStale = maxStale
        self.softTimeout = softTimeout
        self.hardTimeout = hardTimeout
        self.refreshAhead = refreshAhead.map { min(max($0, 0), 1) }
        self.capacity = capacity
    }
}

/// A get that waited longer than its level's hard timeout (the cause of a
/// ``LevelFailure``; the read goes on in the background).
public struct CacheTimeout: Error, Sendable, CustomStringConvertible {
    /// The hard timeout the get waited.
    public let after: Duration
    /// `timed out after <duration>`.
    public var description: String { "timed out after \(after)" }
}

extension CacheLevel where Key: Hashable {
    /// This level (usually a whole stack) answering the last value it saw
    /// for a key, up to `maxStale` old, when the levels fail; after
    /// `softTimeout` answering that value while the read finishes in the
    /// background; after `hardTimeout` answering it or throwing
    /// ``CacheTimeout``. Stale answers are counted and traced. See
    /// ``ResilientCache``.
    public func failSafe(maxStale: Duration, softTimeout: Duration? = nil, hardTimeout: Duration? = nil,
                         capacity: Int = 10_000) -> ResilientCache<Self> {
        ResilientCache(self, options: ResilienceOptions(maxStale: maxStale, softTimeout: softTimeout,
                                                        hardTimeout: hardTimeout, capacity: capacity))
    }

    /// This stack refreshing an entry in the background when a loading get
    /// (``ResilientCache/get(_:ttl:jitter:load:)``) hits it past `fraction`
    /// of its TTL (0.8: in its last fifth), one load per key at a time.
    /// `fraction` is clamped to 0...1; one that is not a number makes every
    /// loading get throw ``ResilienceError/invalidRefreshAhead(_:)``.
    public func refreshAhead(at fraction: Double) -> ResilientCache<Self> {
        ResilientCache(self, options: ResilienceOptions(refreshAhead: fraction))
    }
}

extension ResilientCache {
    /// These options with fail-safe added (see ``CacheLevel/failSafe(maxStale:softTimeout:hardTimeout:capacity:)``).
    public func failSafe(maxStale: Duration, softTimeout: Duration? = nil, hardTimeout: Duration? = nil,
                         capacity: Int = 10_000) -> ResilientCache<Inner> {
        var options = self.options
        (options.maxStale, options.softTimeout, options.hardTimeout, options.capacity) = (maxStale, softTimeout, hardTimeout, capacity)
        return ResilientCache(inner, options: options)
    }

    /// These options with refresh ahead added (see ``CacheLevel/refreshAhead(at:)``).
    public func refreshAhead(at fraction: Double) -> ResilientCache<Inner> {
        var options = self.options
        options.refreshAhead = min(max(fraction, 0), 1)
        return ResilientCache(inner, options: options)
    }
}
