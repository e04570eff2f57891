#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Errors of ``MemoryCacheLevel``.
public enum MemoryCacheError: Error, Equatable, Sendable {
    /// The value alone costs more than the capacity: not stored, any earlier one removed.
    case valueTooLarge(cost: Int, capacity: Int)
    /// The cost closure returned a negative cost; the value was not stored.
    case negativeCost(cost: Int)
}

/// An in-memory level: byte capacity (``CacheCost`` or a closure; inclusive:
/// 300 holds three 100-byte values), optional count limit, level-wide
/// eviction policy, optional expiry. ``onMemoryWarning()`` empties it.
///
/// - ``EvictionPolicy/adaptive`` (default): W-TinyLFU with an adaptive window;
///   a new value may be declined for a more requested one (``admissionsRejected``).
///   ``EvictionPolicy/lru``: keeps every set, evicts the least recently used.
/// - Every hit reaches the policy before the next eviction (some may go
///   uncounted under contention). 16 shards, each behind its own lock:
///   `.adaptive` reads buffer their hit in the shard; `.lru` stamps accesses with
///   the monotonic clock (no shared counter), ordering entries across shards.
public final class MemoryCacheLevel<Key: Hashable & Sendable, Value: Sendable>: ExpirableCacheLevel {
    @usableFromInline static var shardCount: Int { 16 }

    // Grouped by who writes them, a cache line apart (else a write evicts
    // `shards` from other cores): read-only; totals; evictor's; policy's.
    @usableFromInline let shards: [LRUShard<Key, Value>]
    @usableFromInline let padding0 = CacheLinePadding()
    @usableFromInline let costTotal = Atomic<Int>(0)
    @usableFromInline let entryTotal = Atomic<Int>(0)
    @usableFromInline let padding1 = CacheLinePadding()
    @usableFromInline let evictionTotal = Atomic<Int>(0)
    @usableFromInline let evictionLock = Mutex(())
    /// Set while a thread holds `evictionLock` (`.lru`): writers leave their eviction to it.
    @usableFromInline let evictorBusy = Atomic<Bool>(false)
    /// When a writer last left its eviction to a busy evictor (monotonic ns;
    /// 0: none since the last holder looked); see ``tookContention()``.
    @usableFromInline let evictionContendedAt = Atomic<UInt64>(0)
    @usableFromInline let padding2 = CacheLinePadding()
    @usableFromInline let costOf: @Sendable (Value) -> Int
    @usableFromInline let defaultTTL: Duration?
    /// Sliding expiry in nanoseconds (0: off).
    @usableFromInline let slidingNanoseconds: Int64
    /// The adaptive policy's state (unused under `.lru`). Lock order: this, `pendingWrites`, a shard.
    @usableFromInline let adaptive: Mutex<AdaptivePolicy>
    /// Some shard's read buffer is non-empty (`.adaptive`): writes skip scanning 16 empty ones.
    @usableFromInline let readsPending = Atomic<Bool>(false)
    /// Writes made while another thread held `adaptive`, applied by its next holder.
    @usableFromInline let pendingWrites = Mutex<[PendingPolicyWrite]>([])
    /// How many writes `pendingWrites` holds, readable without its lock.
    @usableFromInline let pendingWriteCount = Atomic<Int>(0)
    /// Set while a thread holds `adaptive`: writers leave their write pending for it.
    @usableFromInline let policyBusy = Atomic<Bool>(false)
    @usableFromInline let padding3 = CacheLinePadding()
    @usableFromInline let isAdaptive: Bool
    /// Paths compiled for the concrete types where the level was created (the
    /// `@inlinable` init is specialised there), for callers that do not know
    /// them (`any CacheLevel`, unspecialised generics); see ``getIfPresent(_:)``.
    @usableFromInline let specialised: SpecialisedPaths<Key, Value>

    /// How this level chooses what to evict.
    public let policy: EvictionPolicy

    /// The byte capacity (inclusive); ``resize(capacity:countLimit:)`` changes it.
    @inlinable public var capacity: Int { capacityLimit.load(ordering: .sequentiallyConsistent) }
    /// The most entries kept, if limited; ``resize(capacity:countLimit:)`` changes it.
    @inlinable public var countLimit: Int? {
        let limit = countLimitValue.load(ordering: .sequentiallyConsistent)
        return limit < 0 ? nil : limit
    }
    /// The limits behind ``capacity`` and ``countLimit`` (-1: no count limit).
    /// Sequentially consistent, as the totals they are compared with (see
    /// ``resize(capacity:countLimit:)``); on x86 such a load is a plain one.
    @usableFromInline let capacityLimit: Atomic<Int>
    @usableFromInline let countLimitValue: Atomic<Int>
    /// The largest capacity or count limit (2^56, about 7.2e16); larger ones
    /// (`Int.max`: "count only") are clamped so totals plus slack cannot overflow.
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
        slidingExpiry: Duration? = nil,
        clock: any CacheClock = SystemClock(),
        cost: @escaping @Sendable (Value) -> Int
    ) {
        precondition((slidingExpiry ?? .zero) >= .zero, "slidingExpiry must not be negative")
        precondition(capacity >= 0, "capacity must not be negative")
        precondition((countLimit ?? 0) >= 0, "countLimit must not be negative")
        self.name = name
        self.policy = policy
        self.isAdaptive = policy == .adaptive
        let capacity = min(capacity, Self.largestLimit), countLimit = countLimit.map { min($0, Self.largestLimit) }
        self.adaptive = Mutex(AdaptivePolicy(capacity: capacity, countLimit: countLimit))
        self.capacityLimit = Atomic(capacity)
        self.countLimitValue = Atomic(countLimit ?? -1)
        self.defaultTTL = defaultTTL
        self.slidingNanoseconds = slidingExpiry.map { max(1, $0.nanoseconds) } ?? 0
        self.clock = clock
        self.costOf = cost
        self.shards = (0..<Self.shardCount).map { _ in LRUShard(keepsOrder: policy == .lru) }
        self.specialised = SpecialisedPaths(
            value: { level, key in level.value(forKey: key) },
            entry: { level, key in level.storedEntry(forKey: key) },
            store: { level, value, key, expiresAt in try level.store(value, forKey: key, expiresAt: expiresAt) }
        )
    }

    /// Compiled for concrete `Key` and `Value` (false in the generic body witness tables reach).
    @inlinable @inline(__always)
    var isSpecialised: Bool { _isConcrete(Key.self) && _isConcrete(Value.self) }

    /// Entries currently stored.
    public var count: Int { entryTotal.load(ordering: .relaxed) }
    /// Bytes currently stored.
    public var totalCost: Int { costTotal.load(ordering: .relaxed) }
    /// Entries evicted for capacity or count (under `.adaptive`, with declined new ones).
    public var evictions: Int { evictionTotal.load(ordering: .relaxed) }

    /// Runs `body` with `key`'s shard borrowed from the array's buffer: taking
    /// it out retains and releases it, an atomic write threads fight over.
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
            var expiresAt = state.nodes[Int(i)].expiresAt
            if expiresAt != 0 { expiresAt = slidExpiry(of: i, expiresAt: expiresAt, in: &state) }
            if expiresAt < 0 {
                let cost = state.removeNode(i)
                shard.publishTail(&state)
                return (nil, cost)
            }
            // The published tail stamp may now be too old; the evictor replays first.
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
        // A refused value leaves no older one behind.
        guard cost >= 0 else {
            removeStored(key)
            throw MemoryCacheError.negativeCost(cost: cost)
        }
        let capacity = self.capacity
        guard cost <= capacity else {
            removeStored(key)
            throw MemoryCacheError.valueTooLarge(cost: cost, capacity: capacity)
        }
        let deadline: CacheInstant?
        do {
            deadline = defaultTTL == nil ? expiresAt : try StoredDeadline.resolve(given: expiresAt, backfill: backfill) {
                try ExpiryError.checked(defaultTTL, role: "defaultTTL").map { clock.now().advanced(by: $0) }
            }
        } catch {
            removeStored(key)  // a negative defaultTTL: as a refused value, no older one stays
            throw error
        }
        let hashed = HashedKey(key)
        if isAdaptive {
            withShard(for: hashed) { adaptiveStore(value, forKey: hashed, in: $0, cost: cost, deadline: deadline) }
            return
        }
        let (countDelta, costDelta) = withShard(for: hashed) { shard in shard.state.withLock { state -> (Int, Int) in
            state.applyReads()
            let stamp = state.nextStamp()
            let (expires, expiresAtMost) = storedExpiry(deadline)
            if let i = state.find(hashed) {
                let delta = cost - state.nodes[Int(i)].cost
                state.nodes[Int(i)].value = value
                state.nodes[Int(i)].cost = cost
                state.nodes[Int(i)].expiresAt = expires
                state.nodes[Int(i)].expiresAtMost = expiresAtMost
                state.nodes[Int(i)].writtenAt = stamp
                state.touch(i, stamp: stamp)
                shard.publishTail(&state)
                return (0, delta)
            }
            // The stamp is the monotonic clock: the write time costs no clock read.
            state.insert(LRUNode(key: hashed, value: value, cost: cost, expiresAt: expires, expiresAtMost: expiresAtMost,
                                 stamp: stamp, writtenAt: stamp))
            shard.publishTail(&state)
            return (1, cost)
        } }
        account(count: countDelta, cost: costDelta)
        if isOverLimits { evict() }
    }

    @inlinable
    func account(count: Int, cost: Int) {
        // Sequentially consistent (as cheap as relaxed on x86): see `evict()`.
        if count != 0 { entryTotal.add(count, ordering: .sequentiallyConsistent) }
        if cost != 0 { costTotal.add(cost, ordering: .sequentiallyConsistent) }
    }

    /// Over the limits plus the slack writers may leave to a busy evictor
    /// (1/32 of each): past it a writer waits, so none outruns the evictor.
    @inlinable
    var isFarOverLimits: Bool { isOverLimits(excluding: 0, cost: 0, slack: true) }

    @inlinable
    var isOverLimits: Bool { isOverLimits(excluding: 0, cost: 0, slack: false) }

    /// Whether the level would be over its limits (plus 1/32 with `slack`)
    /// without `count` entries costing `cost` gone but not yet off the totals.
    @inlinable
    func isOverLimits(excluding count: Int, cost: Int, slack: Bool) -> Bool {
        if costTotal.load(ordering: .sequentiallyConsistent) - cost > capacity + (slack ? capacity / 32 : 0) { return true }
        guard let countLimit else { return false }
        return entryTotal.load(ordering: .sequentiallyConsistent) - count > countLimit + (slack ? countLimit / 32 : 0)
    }

    /// Removes least-recently-used entries across all shards until within the
    /// limits (`@inlinable`: unspecialised, an evicting set cost 16x a replacing one).
    /// A writer finding another thread evicting leaves its eviction to it (two
    /// taking turns at the lock cost more than one doing both), unless past
    /// ``isFarOverLimits``: the evictor clears `evictorBusy` before unlocking,
    /// then re-checks the limits, seeing (sequentially consistent) the totals
    /// of every write that found the flag set.
    @inlinable
    func evict() { evict(thenWhileHolding: nil) }

    /// ``evict()``; `body` runs once after the first pass, lock held (tests: evict for its write).
    @inlinable
    func evict(thenWhileHolding body: (() -> Void)?) {
        var body = body
        // Empty passes though the totals say over (a remover not yet off the
        // totals): two in a row end the loop rather than spin until it runs.
        var emptyPasses = 0
        while (isOverLimits || body != nil) && emptyPasses < 2 {
            if evictorBusy.load(ordering: .sequentiallyConsistent) {
                evictionContendedAt.store(monotonicNanoseconds(), ordering: .relaxed)
                guard isFarOverLimits else { return }
                // Too far over: wait for the evictor (queueing on its lock hands it back and forth).
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

    /// How recently a writer must have met the evictor for headroom (else lone eviction stays exact).
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

    /// The body of ``evict()``, with `evictionLock` held; returns whether it
    /// stopped over the limits because every shard was empty. With `headroom`
    /// (writers are meeting here) it takes up to ``headroomEntries`` more LRU
    /// entries while within 1/64 of a limit after each (one large entry must
    /// not empty the level), so following writers find room and skip the lock
    /// (each turn at it moves lock, totals and stamps between cores). A lone
    /// thread evicts exactly to the limits: a trace replays as exact LRU.
    @inlinable
    func evictWhileOverLimits(headroom: Bool = false) -> Bool {
        // Taken off the totals (the line every writer adds to) once, at the end.
        var removedCount = 0, removedCost = 0
        // Entries still allowed beyond the limits, and how far below them.
        var extra = headroom ? Self.headroomEntries : 0
        let capacity = self.capacity, countLimit = self.countLimit
        let roomCost = capacity / 64, roomCount = (countLimit ?? 0) / 64
        defer {
            if removedCount > 0 {
                account(count: -removedCount, cost: -removedCost)
                evictionTotal.add(removedCount, ordering: .relaxed)
            }
        }
        while isOverLimits(excluding: removedCount, cost: removedCost, slack: false)
            || (extra > 0 && isAboveHeadroom(excluding: removedCount, cost: removedCost, roomCost: roomCost, roomCount: roomCount)) {
            // Published stamps are never newer than the truth (reads only make
            // a tail newer): replay the oldest's reads, evict only if its tail
            // is still the oldest. Borrowed (``withShard(for:_:)``): retaining a
            // shard was half an eviction's cost and wrote its lock word's line.
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
                // Its entries older than every other tail go in one visit, while over.
                return victim.state.withLock { state -> (count: Int, cost: Int)? in
                    state.applyReads()
                    defer { victim.publishTail(&state) }
                    // Emptied by a remover since the scan (now published): choose again.
                    guard state.tail >= 0 else { return (0, 0) }
                    // How far over, read once per visit (hot line); later writes: next visit.
                    var excessCost = costTotal.load(ordering: .sequentiallyConsistent) - removedCost - capacity
                    var excessCount = countLimit.map { entryTotal.load(ordering: .sequentiallyConsistent) - removedCount - $0 } ?? 0
                    var count = 0, cost = 0
                    while state.tail >= 0 && state.tailStamp <= runnerUp {
                        let needed = excessCost > 0 || excessCount > 0
                        if !needed {
                            guard extra > 0 else { break }
                            // Headroom: only within 1/64 of a limit without it.
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

    /// Whether, without `count` entries costing `cost`, the level exceeds its limits less the room.
    @inlinable
    func isAboveHeadroom(excluding count: Int, cost: Int, roomCost: Int, roomCount: Int) -> Bool {
        if costTotal.load(ordering: .sequentiallyConsistent) - cost > capacity - roomCost { return true }
        guard let countLimit else { return false }
        return entryTotal.load(ordering: .sequentiallyConsistent) - count > countLimit - roomCount
    }

    public func remove(_ key: Key) async throws { removeStored(key) }

    /// Removes `key` without suspending (``remove(_:)``, for callers holding a lock).
    public func removeValue(forKey key: Key) { removeStored(key) }

    /// Only this process writes a memory level: the fill is stored.
    public func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws {
        try await set(fill.value, forKey: key, expiresAt: fill.expiresAt)
    }

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

    /// Empties the level: the stack keeping it coherent went (``CacheLevel/lostCoherence()``).
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
        slidingExpiry: Duration? = nil,
        clock: any CacheClock = SystemClock()
    ) {
        self.init(name: name, capacity: capacity, countLimit: countLimit, policy: policy,
                  defaultTTL: defaultTTL, slidingExpiry: slidingExpiry, clock: clock) {
            $0.cacheCost
        }
    }
}

