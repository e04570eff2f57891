#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Errors of ``MemoryCacheLevel``.
public enum MemoryCacheError: Error, Equatable, Sendable {
    /// The value alone costs more than the whole capacity; it was not stored,
    /// and an earlier value for the key, if any, was removed (the level never
    /// serves a value older than the last set).
    case valueTooLarge(cost: Int, capacity: Int)
    /// The cost closure returned a negative cost; the value was not stored.
    case negativeCost(cost: Int)
}

/// An in-memory level with a byte capacity, an optional count limit, an
/// eviction policy over the whole level, and optional expiry.
///
/// - Cost is bytes (``CacheCost``, or a closure); the limit is inclusive:
///   capacity 300 holds three 100-byte values.
/// - ``EvictionPolicy/adaptive`` (the default) is W-TinyLFU with an
///   adaptive window: a new value may be declined in favour of one requested
///   more often (``admissionsRejected``). ``EvictionPolicy/lru`` keeps every
///   set and evicts the least recently used entry.
/// - Reads count as use: every hit reaches the policy before the next
///   eviction decision (under contention, some hits may go uncounted).
/// - Entries live in 16 shards, each behind its own lock, so two threads
///   rarely meet. Under `.adaptive` a read leaves its hit in its shard's
///   buffer for the policy. Under `.lru` accesses are stamped with the
///   system's monotonic clock (no shared counter to bounce between cores),
///   which orders entries across shards; the evictor removes the globally
///   least recently used one.
/// - ``onMemoryWarning()`` empties it.
public final class MemoryCacheLevel<Key: Hashable & Sendable, Value: Sendable>: ExpirableCacheLevel {
    @usableFromInline static var shardCount: Int { 16 }

    // Stored properties in groups by who writes them, a cache line apart:
    // read-only ones every call reads; the totals every write adds to; the
    // evictor's; the adaptive policy's. (A write to any of them used to
    // evict `shards` from the other core's cache.)
    @usableFromInline let shards: [LRUShard<Key, Value>]
    @usableFromInline let padding0 = CacheLinePadding()
    @usableFromInline let costTotal = Atomic<Int>(0)
    @usableFromInline let entryTotal = Atomic<Int>(0)
    @usableFromInline let padding1 = CacheLinePadding()
    @usableFromInline let evictionTotal = Atomic<Int>(0)
    @usableFromInline let evictionLock = Mutex(())
    /// Set while a thread holds `evictionLock` (under `.lru`): a writer that
    /// finds it set leaves the eviction its write calls for to that thread.
    @usableFromInline let evictorBusy = Atomic<Bool>(false)
    /// When a writer last left its eviction to a busy evictor (monotonic
    /// nanoseconds; 0: not since the last holder looked). The next holder of
    /// `evictionLock` clears it and, if it is recent (``contentionWindow``),
    /// evicts with headroom (see ``evictWhileOverLimits(headroom:)``).
    @usableFromInline let evictionContendedAt = Atomic<UInt64>(0)
    @usableFromInline let padding2 = CacheLinePadding()
    @usableFromInline let costOf: @Sendable (Value) -> Int
    @usableFromInline let defaultTTL: Duration?
    /// The adaptive policy's state (unused under `.lru`); lock order: this,
    /// then `pendingWrites`, then a shard.
    @usableFromInline let adaptive: Mutex<AdaptivePolicy>
    /// Set when a shard's read buffer goes from empty to not (under
    /// `.adaptive`), cleared by the full drain before a policy decision, so
    /// that a run of writes does not look at 16 empty buffers each time.
    @usableFromInline let readsPending = Atomic<Bool>(false)
    /// Writes waiting for the policy (under `.adaptive`): made while another
    /// thread held `adaptive`, applied by its next holder. Lock order:
    /// `adaptive`, then this, then a shard.
    @usableFromInline let pendingWrites = Mutex<[PendingPolicyWrite]>([])
    /// How many writes `pendingWrites` holds, readable without its lock.
    @usableFromInline let pendingWriteCount = Atomic<Int>(0)
    /// Set while a thread holds `adaptive`: a writer that finds it set leaves
    /// its write pending for that thread instead of waiting for the lock.
    @usableFromInline let policyBusy = Atomic<Bool>(false)
    @usableFromInline let padding3 = CacheLinePadding()
    @usableFromInline let isAdaptive: Bool
    /// The level's read and write paths compiled for the concrete `Key` and
    /// `Value` where the level was created (``MemoryCacheLevel/init(name:capacity:countLimit:policy:defaultTTL:clock:cost:)``
    /// is `@inlinable`, so it is specialised there). Code that reaches the level without knowing its
    /// types (`any CacheLevel`, an unspecialised generic caller in another
    /// module) calls these instead of the generic path; see ``getIfPresent(_:)``.
    @usableFromInline let specialised: SpecialisedPaths<Key, Value>

    /// How this level chooses what to evict.
    public let policy: EvictionPolicy

    /// The byte capacity (inclusive).
    public let capacity: Int
    /// The most entries kept, if limited.
    public let countLimit: Int?
    /// The largest capacity or count limit (2^56, about 7.2e16): larger ones,
    /// such as `Int.max` for "limit by count only", are taken as this, so
    /// that totals and limits plus their slack cannot overflow.
    public static var largestLimit: Int { 1 << 56 }
    public let clock: any CacheClock
    public let name: String

    /// A level holding at most `capacity` bytes as measured by `cost`.
    @inlinable
    public init(
        name: String = "memory",
        capacity: Int,
        countLimit: Int? = nil,
        policy: EvictionPolicy = .adaptive,
        defaultTTL: Duration? = nil,
        clock: any CacheClock = SystemClock(),
        cost: @escaping @Sendable (Value) -> Int
    ) {
        precondition(capacity >= 0, "capacity must not be negative")
        precondition((countLimit ?? 0) >= 0, "countLimit must not be negative")
        self.name = name
        self.policy = policy
        self.isAdaptive = policy == .adaptive
        let capacity = min(capacity, Self.largestLimit), countLimit = countLimit.map { min($0, Self.largestLimit) }
        self.adaptive = Mutex(AdaptivePolicy(capacity: capacity, countLimit: countLimit))
        self.capacity = capacity
        self.countLimit = countLimit
        self.defaultTTL = defaultTTL
        self.clock = clock
        self.costOf = cost
        self.shards = (0..<Self.shardCount).map { _ in LRUShard(keepsOrder: policy == .lru) }
        self.specialised = SpecialisedPaths(
            value: { level, key in level.value(forKey: key) },
            entry: { level, key in level.storedEntry(forKey: key) },
            store: { level, value, key, expiresAt in try level.store(value, forKey: key, expiresAt: expiresAt) }
        )
    }

    /// Whether this code was compiled for concrete `Key` and `Value` (true
    /// once specialised; false in the generic body that witness tables and
    /// unspecialised callers reach).
    @inlinable @inline(__always)
    var isSpecialised: Bool { _isConcrete(Key.self) && _isConcrete(Value.self) }

    /// Entries currently stored.
    public var count: Int { entryTotal.load(ordering: .relaxed) }
    /// Bytes currently stored.
    public var totalCost: Int { costTotal.load(ordering: .relaxed) }
    /// Entries evicted for capacity or count since creation (under `.adaptive`,
    /// including new entries that admission declined).
    public var evictions: Int { evictionTotal.load(ordering: .relaxed) }

    /// Runs `body` with the shard of `key`, borrowed from the array's buffer:
    /// taking it out of the array retains and releases it, an atomic write to
    /// the shard's header on every read that two threads then fight over.
    @inlinable @inline(__always)
    func withShard<R>(for key: HashedKey<Key>, _ body: (LRUShard<Key, Value>) -> R) -> R {
        withShard(forHash: key.hash, body)
    }

    /// ``withShard(for:_:)`` by the key's hash alone.
    @inlinable @inline(__always)
    func withShard<R>(forHash hash: Int, _ body: (LRUShard<Key, Value>) -> R) -> R {
        shards.withUnsafeBufferPointer { body($0[(hash >> 7) & (Self.shardCount - 1)]) }
    }

    /// The value for `key` without suspending (a hit counts as a use).
    @inlinable
    public func value(forKey key: Key) -> Value? {
        storedEntry(forKey: key)?.value
    }

    /// The value for `key` with its expiry, without suspending (a hit counts as a use).
    @inlinable
    public func storedEntry(forKey key: Key) -> CacheEntry<Value>? {
        let hashed = HashedKey(key)
        return withShard(for: hashed) { shard in storedEntry(hashed, in: shard) }
    }

    @inlinable @inline(__always)
    func storedEntry(_ hashed: HashedKey<Key>, in shard: LRUShard<Key, Value>) -> CacheEntry<Value>? {
        if isAdaptive { return adaptiveEntry(hashed, in: shard) }
        let (entry, expiredCost) = shard.state.withLock { state -> (CacheEntry<Value>?, Int?) in
            guard let i = state.find(hashed) else { return (nil, nil) }
            let expiresAt = state.nodes[Int(i)].expiresAt
            if expiresAt != 0 && clock.now().nanosecondsSince1970 >= expiresAt {
                let cost = state.removeNode(i)
                shard.publishTail(&state)
                return (nil, cost)
            }
            // The published tail stamp may now be older than the truth; the
            // evictor replays the log before it relies on it.
            state.recordRead(i, stamp: state.nextStamp())
            let deadline = expiresAt == 0 ? nil : CacheInstant(nanosecondsSince1970: expiresAt)
            return (CacheEntry(value: state.nodes[Int(i)].value!, expiresAt: deadline), nil)
        }
        if let expiredCost {
            account(count: -1, cost: -expiredCost)
            CacheContext.noteExpired()
        }
        return entry
    }

    @inlinable @inline(__always)
    public func getIfPresent(_ key: Key) async throws -> Value? {
        isSpecialised ? value(forKey: key) : specialised.value(self, key)
    }

    @inlinable @inline(__always)
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        isSpecialised ? storedEntry(forKey: key) : specialised.entry(self, key)
    }

    @inlinable
    public func set(_ value: Value, forKey key: Key) async throws {
        if isSpecialised { try store(value, forKey: key, expiresAt: nil) } else { try specialised.store(self, value, key, nil) }
    }

    @inlinable
    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        if isSpecialised {
            try store(value, forKey: key, expiresAt: expiresAt)
        } else {
            try specialised.store(self, value, key, expiresAt)
        }
    }

    /// A back-fill keeps the lower entry's deadline, capped at this level's TTL.
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try store(fill.value, forKey: key, expiresAt: fill.expiresAt, backfill: true)
    }

    /// Stores without suspending; throws ``MemoryCacheError/valueTooLarge(cost:capacity:)``.
    /// `backfill`: the value fills a miss (its deadline is capped at this level's TTL).
    @inlinable
    public func store(_ value: Value, forKey key: Key, expiresAt: CacheInstant? = nil, backfill: Bool = false) throws {
        let cost = costOf(value)
        // A refused value leaves no older one behind (a failed set never
        // leaves the value it was replacing readable).
        guard cost >= 0 else {
            removeStored(key)
            throw MemoryCacheError.negativeCost(cost: cost)
        }
        guard cost <= capacity else {
            removeStored(key)
            throw MemoryCacheError.valueTooLarge(cost: cost, capacity: capacity)
        }
        let deadline = defaultTTL == nil
            ? expiresAt : StoredDeadline.resolve(given: expiresAt, backfill: backfill) { defaultTTL.map { clock.now().advanced(by: $0) } }
        let hashed = HashedKey(key)
        if isAdaptive {
            withShard(for: hashed) { adaptiveStore(value, forKey: hashed, in: $0, cost: cost, deadline: deadline) }
            return
        }
        let (countDelta, costDelta) = withShard(for: hashed) { shard in shard.state.withLock { state -> (Int, Int) in
            state.applyReads()
            let stamp = state.nextStamp()
            // 0 means "never"; a deadline at or before 1970 is already past.
            let expires = deadline.map { max($0.nanosecondsSince1970, 1) } ?? 0
            if let i = state.find(hashed) {
                let delta = cost - state.nodes[Int(i)].cost
                state.nodes[Int(i)].value = value
                state.nodes[Int(i)].cost = cost
                state.nodes[Int(i)].expiresAt = expires
                state.touch(i, stamp: stamp)
                shard.publishTail(&state)
                return (0, delta)
            }
            state.insert(LRUNode(key: hashed, value: value, cost: cost, expiresAt: expires, stamp: stamp))
            shard.publishTail(&state)
            return (1, cost)
        } }
        account(count: countDelta, cost: costDelta)
        if isOverLimits { evict() }
    }

    @inlinable
    func account(count: Int, cost: Int) {
        // Sequentially consistent (the same instruction as relaxed on x86):
        // an evictor re-reads the totals after releasing its lock, and must
        // see every write that left its eviction to it (see `evict()`).
        if count != 0 { entryTotal.add(count, ordering: .sequentiallyConsistent) }
        if cost != 0 { costTotal.add(cost, ordering: .sequentiallyConsistent) }
    }

    /// Whether the level holds more than its limits plus the slack that
    /// concurrent writers may leave to the thread already evicting (1/32 of
    /// each limit): past it a writer waits for that thread to catch up, so
    /// writers cannot outrun the evictor.
    @inlinable
    var isFarOverLimits: Bool { isOverLimits(excluding: 0, cost: 0, slack: true) }

    /// Whether the level holds more than its limits allow.
    @inlinable
    var isOverLimits: Bool { isOverLimits(excluding: 0, cost: 0, slack: false) }

    /// Whether the level would be over its limits (plus 1/32 of each with
    /// `slack`) without `count` entries costing `cost` that are gone but not
    /// yet taken off the totals.
    @inlinable
    func isOverLimits(excluding count: Int, cost: Int, slack: Bool) -> Bool {
        if costTotal.load(ordering: .sequentiallyConsistent) - cost > capacity + (slack ? capacity / 32 : 0) { return true }
        guard let countLimit else { return false }
        return entryTotal.load(ordering: .sequentiallyConsistent) - count > countLimit + (slack ? countLimit / 32 : 0)
    }

    /// Removes least-recently-used entries, across all shards, until the level
    /// is within its limits. (`@inlinable` so it is compiled for the concrete
    /// types with the set that calls it: unspecialised, an evicting set cost
    /// 16x a replacing one, nearly all of it generic metadata and witness calls.)
    ///
    /// A writer that finds another thread evicting leaves its eviction to it
    /// rather than queueing for the lock (two writers taking turns at it cost
    /// more than one doing both), unless the level is past the slack of
    /// ``isFarOverLimits``: the evictor clears `evictorBusy` before it
    /// releases the lock and then checks the limits again, and with
    /// sequentially consistent accesses it sees the totals of every write
    /// that found the flag set.
    @inlinable
    func evict() { evict(thenWhileHolding: nil) }

    /// ``evict()``; `body`, if given, runs once with the lock still held
    /// after the first pass (tests: a write made there must be evicted for).
    @inlinable
    func evict(thenWhileHolding body: (() -> Void)?) {
        var body = body
        // Passes that found nothing to evict although the totals say the
        // level is over (a remover has emptied a shard and not yet taken its
        // entry off the totals): a second one in a row ends the loop, which
        // would otherwise spin until the remover runs.
        var emptyPasses = 0
        while (isOverLimits || body != nil) && emptyPasses < 2 {
            if evictorBusy.load(ordering: .sequentiallyConsistent) {
                evictionContendedAt.store(monotonicNanoseconds(), ordering: .relaxed)
                guard isFarOverLimits else { return }
                // Too far over to leave to the evictor: wait until it has
                // caught up (queueing on its lock would hand the lock back
                // and forth), then go round again.
                while evictorBusy.load(ordering: .sequentiallyConsistent) && isFarOverLimits { sched_yield() }
                continue
            }
            evictionLock.withLock { _ in
                evictorBusy.store(true, ordering: .sequentiallyConsistent)
                defer { evictorBusy.store(false, ordering: .sequentiallyConsistent) }
                emptyPasses = evictWhileOverLimits(headroom: tookContention()) ? emptyPasses + 1 : 0
                body?()
                body = nil
            }
        }
    }

    /// The most entries an evictor with headroom takes beyond the limits.
    @inlinable static var headroomEntries: Int { 16 }

    /// How recently a writer must have met the evictor for the next one to
    /// take headroom: a mark left by contention long over (its evictor
    /// finished without looking) does not make a lone thread's eviction inexact.
    @inlinable static var contentionWindow: UInt64 { 1_000_000 }

    /// Whether a writer met the evictor within ``contentionWindow``; clears
    /// the mark (call with `evictionLock` held). Alone, a load and no clock read.
    @inlinable
    func tookContention() -> Bool {
        let at = evictionContendedAt.load(ordering: .relaxed)
        guard at != 0 else { return false }
        evictionContendedAt.store(0, ordering: .relaxed)
        return monotonicNanoseconds() &- at < Self.contentionWindow
    }

    /// The body of ``evict()``, with `evictionLock` held. Returns whether it
    /// stopped over the limits because every shard was empty.
    ///
    /// With `headroom` (a writer found the previous evictor busy: writers
    /// are meeting here), it goes on past the limits, taking up to
    /// ``headroomEntries`` more least-recently-used entries while the level
    /// stays within 1/64 of one of its limits after each (an entry that
    /// would take it further below ends the headroom: with unequal costs,
    /// one large entry must not empty the level). The writers that follow then find
    /// room and skip the lock, instead of taking turns at it once per set
    /// (each turn moves the lock, the totals and the shards' stamps to the
    /// other core). A single thread never meets another here, so alone the
    /// level evicts exactly to its limits and replays a trace as exact LRU.
    @inlinable
    func evictWhileOverLimits(headroom: Bool = false) -> Bool {
        // Counted here and taken off the totals once, at the end: the totals
        // are the one line every writer also adds to.
        var removedCount = 0, removedCost = 0
        // Entries still allowed beyond the limits, and how far below them
        // the level may go.
        var extra = headroom ? Self.headroomEntries : 0
        let roomCost = capacity / 64, roomCount = (countLimit ?? 0) / 64
        defer {
            if removedCount > 0 {
                account(count: -removedCount, cost: -removedCost)
                evictionTotal.add(removedCount, ordering: .relaxed)
            }
        }
        while isOverLimits(excluding: removedCount, cost: removedCost, slack: false)
            || (extra > 0 && isAboveHeadroom(excluding: removedCount, cost: removedCost, roomCost: roomCost, roomCount: roomCount)) {
            // Published stamps are never newer than the truth (a read can
            // only make a shard's real tail newer), so the shard with the
            // oldest published stamp is a candidate: replay its reads and
            // evict only if its real tail is still the oldest.
            // Shards are borrowed from the array's buffer: taking one out
            // retains and releases it, half of an eviction's cost, and
            // writes the line its lock word shares with a writer.
            let removed = shards.withUnsafeBufferPointer { shards -> (count: Int, cost: Int)? in
                var victimIndex = -1
                var oldest = UInt64.max, runnerUp = UInt64.max
                for index in shards.indices {
                    let stamp = shards[index].tailStamp.load(ordering: .relaxed)
                    if stamp < oldest {
                        runnerUp = oldest
                        oldest = stamp
                        victimIndex = index
                    } else if stamp < runnerUp {
                        runnerUp = stamp
                    }
                }
                guard victimIndex >= 0 else { return nil }
                let victim = shards[victimIndex]
                // Every entry of this shard older than every other shard's
                // tail goes in this one visit, as long as the level is over.
                return victim.state.withLock { state -> (count: Int, cost: Int)? in
                    state.applyReads()
                    defer { victim.publishTail(&state) }
                    // Emptied since the scan (a remover): its stamp is
                    // published as empty now; choose again.
                    guard state.tail >= 0 else { return (0, 0) }
                    // How far over the level is, read once per visit (the
                    // totals are the lines every writer adds to); writes
                    // made meanwhile are seen by the next visit.
                    var excessCost = costTotal.load(ordering: .sequentiallyConsistent) - removedCost - capacity
                    var excessCount = countLimit.map { entryTotal.load(ordering: .sequentiallyConsistent) - removedCount - $0 } ?? 0
                    var count = 0, cost = 0
                    while state.tail >= 0 && state.tailStamp <= runnerUp {
                        let needed = excessCost > 0 || excessCount > 0
                        if !needed {
                            guard extra > 0 else { break }
                            // Headroom: only if the level stays within 1/64
                            // of a limit without this entry.
                            let tailCost = state.nodes[Int(state.tail)].cost
                            guard excessCost - tailCost >= -roomCost || (roomCount > 0 && excessCount - 1 >= -roomCount) else {
                                extra = 0
                                break
                            }
                            extra -= 1
                        }
                        let removed = state.removeNode(state.tail)
                        cost += removed
                        count += 1
                        excessCost -= removed
                        excessCount -= 1
                    }
                    return (count, cost)  // none: stale, choose again
                }
            }
            guard let removed else { return true }  // nothing left to evict
            removedCount += removed.count
            removedCost += removed.cost
        }
        return false
    }

    /// Whether the level, without `count` entries costing `cost` already
    /// taken out, holds more than its limits less `roomCost` and `roomCount`.
    @inlinable
    func isAboveHeadroom(excluding count: Int, cost: Int, roomCost: Int, roomCount: Int) -> Bool {
        if costTotal.load(ordering: .sequentiallyConsistent) - cost > capacity - roomCost { return true }
        guard let countLimit else { return false }
        return entryTotal.load(ordering: .sequentiallyConsistent) - count > countLimit - roomCount
    }

    public func remove(_ key: Key) async throws { removeStored(key) }

    /// Removes `key` without suspending.
    @inlinable
    func removeStored(_ key: Key) {
        let hashed = HashedKey(key)
        if isAdaptive {
            withShard(for: hashed) { adaptiveRemove(hashed, in: $0, onlyIfExpiredAt: nil) }
            return
        }
        let cost = withShard(for: hashed) { shard in
            shard.state.withLock { state -> Int? in
                guard let i = state.find(hashed) else { return nil }
                let cost = state.removeNode(i)
                shard.publishTail(&state)
                return cost
            }
        }
        if let cost { account(count: -1, cost: -cost) }
    }

    public func clear() async { removeAll() }

    /// Empties the level.
    public func onMemoryWarning() async { removeAll() }

    /// Empties the level: the stack that kept it coherent with a level
    /// below that reports changes is gone (see ``CacheLevel/lostCoherence()``).
    public func lostCoherence() { removeAll() }

    /// Removes every entry without suspending.
    public func removeAll() {
        if isAdaptive {
            withPolicy { policy in
                pendingWrites.withLock {
                    $0.removeAll()
                    pendingWriteCount.store(0, ordering: .sequentiallyConsistent)
                }
                removeAllFromShards()
                policy.removeAll()
            }
        } else {
            removeAllFromShards()
        }
    }

    func removeAllFromShards() {
        for shard in shards {
            let (count, cost) = shard.state.withLock { state -> (Int, Int) in
                let removed = state.removeAll()
                shard.pendingReads.store(0, ordering: .relaxed)
                shard.publishTail(&state)
                return removed
            }
            account(count: -count, cost: -cost)
        }
    }

    @discardableResult
    public func removeExpired() async -> Int {
        if isAdaptive {
            return withPolicy { policy in removeExpiredFromShards { policy.remove($0) } }
        }
        return removeExpiredFromShards { _ in }
    }

    /// Removes expired entries from every shard, telling `forget` each one's policy id.
    func removeExpiredFromShards(_ forget: (Int32) -> Void) -> Int {
        let now = clock.now().nanosecondsSince1970
        var removed = 0
        for shard in shards {
            let (count, cost) = shard.state.withLock { state -> (Int, Int) in
                var count = 0, cost = 0
                for i in state.nodes.indices where state.nodes[i].key != nil {
                    let expires = state.nodes[i].expiresAt
                    if expires != 0 && now >= expires {
                        forget(state.nodes[i].policyID)
                        cost += state.removeNode(Int32(i))
                        count += 1
                    }
                }
                shard.publishTail(&state)
                return (count, cost)
            }
            account(count: -count, cost: -cost)
            removed += count
        }
        return removed
    }

    /// Keys from most to least recently used under `.lru`; under `.adaptive`,
    /// every key in no particular order (a snapshot; for tests and tools).
    public func keysByRecency() -> [Key] {
        var all: [(UInt64, Key)] = []
        for shard in shards {
            shard.state.withLock { state in
                guard state.keepsOrder else {
                    for node in state.nodes { if let key = node.key { all.append((node.stamp, key.key)) } }
                    return
                }
                state.applyReads()
                var i = state.head
                while i >= 0 {
                    let node = state.nodes[Int(i)]
                    all.append((node.stamp, node.key!.key))
                    i = node.next
                }
            }
        }
        return all.sorted { $0.0 > $1.0 }.map(\.1)
    }
}

extension MemoryCacheLevel where Value: CacheCost {
    /// A level holding at most `capacity` bytes of values (their ``CacheCost``).
    @inlinable
    public convenience init(
        name: String = "memory",
        capacity: Int,
        countLimit: Int? = nil,
        policy: EvictionPolicy = .adaptive,
        defaultTTL: Duration? = nil,
        clock: any CacheClock = SystemClock()
    ) {
        self.init(name: name, capacity: capacity, countLimit: countLimit, policy: policy,
                  defaultTTL: defaultTTL, clock: clock) {
            $0.cacheCost
        }
    }
}

