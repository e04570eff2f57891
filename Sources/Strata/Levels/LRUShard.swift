#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A key with its hash computed once, for both the shard choice and its index.
@usableFromInline
struct HashedKey<Key: Hashable>: Hashable {
    @usableFromInline let key: Key
    @usableFromInline let hash: Int

    @inlinable init(_ key: Key) {
        self.key = key
        self.hash = key.hashValue
    }

    @inlinable func hash(into hasher: inout Hasher) { hasher.combine(hash) }
    @inlinable static func == (lhs: Self, rhs: Self) -> Bool { lhs.hash == rhs.hash && lhs.key == rhs.key }
}

/// One entry of a shard's intrusive LRU list (indices into `nodes`).
@usableFromInline
struct LRUNode<Key: Hashable, Value> {
    @usableFromInline var key: HashedKey<Key>?
    @usableFromInline var value: Value?
    @usableFromInline var cost: Int
    /// Expiry in ns since 1970, or 0 for none.
    @usableFromInline var expiresAt: Int64
    /// With sliding expiry, the latest `expiresAt` may slide to (the TTL's
    /// deadline; 0: none).
    @usableFromInline var expiresAtMost: Int64
    /// The level-wide access clock at the last read or write.
    @usableFromInline var stamp: UInt64
    @usableFromInline var prev: Int32
    @usableFromInline var next: Int32
    /// The entry's id in the level's ``AdaptivePolicy`` (-1 under `.lru`).
    @usableFromInline var policyID: Int32
    /// Hits since the key entered the shard, for the inspector (saturating),
    /// counted where a hit already stamps the node; `.lru` only (`.adaptive`:
    /// its policy counts them). In the padding after `policyID` (`writtenAt`
    /// makes the node 8 bytes larger).
    @usableFromInline var hits: UInt32 = 0
    /// When the value was last written (set or back-fill; monotonic ns), for
    /// the inspector's age; a hit leaves it.
    @usableFromInline var writtenAt: UInt64

    @inlinable init(key: HashedKey<Key>, value: Value, cost: Int, expiresAt: Int64, expiresAtMost: Int64 = 0,
                    stamp: UInt64, writtenAt: UInt64, policyID: Int32 = -1) {
        self.policyID = policyID
        self.writtenAt = writtenAt
        self.expiresAtMost = expiresAtMost
        self.key = key
        self.value = value
        self.cost = cost
        self.expiresAt = expiresAt
        self.stamp = stamp
        self.prev = -1
        self.next = -1
    }
}

/// One shard's state: an index into an index-linked LRU list, most recent at
/// `head`. A hit stamps its node and logs it in `readLog` (relinking touches
/// three other nodes, costing more than the look-up); the log is replayed in
/// order, skipping superseded reads, before any list write, when full, and
/// before the evictor trusts `tail`, leaving the list exactly ordered by stamp.
@usableFromInline
struct LRUShardState<Key: Hashable, Value> {
    /// Open-addressing index (linear probing, backward-shift deletion) from the
    /// precomputed hash to node index + 1 (0 = empty): keys are hashed once.
    @usableFromInline var slots: [Int32] = []
    @usableFromInline var slotShift: UInt64 = 64
    @usableFromInline var liveCount = 0
    @usableFromInline var nodes: [LRUNode<Key, Value>] = []
    @usableFromInline var free: [Int32] = []
    @usableFromInline var head: Int32 = -1
    @usableFromInline var tail: Int32 = -1
    @usableFromInline var readLog: [(index: Int32, stamp: UInt64)] = []
    @usableFromInline var lastStamp: UInt64 = 0
    /// How many hits wait in the shard's ``LRUShard/policyReads`` buffer.
    @usableFromInline var policyReadCount = 0
    /// Whether entries are linked in recency order (`.lru`; under `.adaptive`
    /// an unread list cost two more node touches per evicting set).
    @usableFromInline var keepsOrder = true
    /// Changes whenever a key comes or goes: a look-up holds while it lasts.
    @usableFromInline var generation: UInt64 = 0

    /// The next access stamp: the monotonic clock (ns), forced above the last.
    /// No shared write (a level-wide counter bounced a line per read), and a
    /// task's operations are ordered exactly even across threads.
    @inlinable mutating func nextStamp() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        let now = UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
        lastStamp = max(now, lastStamp &+ 1)
        return lastStamp
    }

    /// A fresh token for a node written under `.adaptive` (no stamps there),
    /// telling a ``PendingPolicyWrite`` whether it is still the node's latest.
    @inlinable mutating func nextToken() -> UInt64 {
        lastStamp &+= 1
        return lastStamp
    }

    /// Under `.adaptive`: stores `value` in place or as a node new to the policy
    /// (`policyID` -1) with a fresh token, written at `writtenAt` (monotonic
    /// ns); returns the node and count and cost deltas. A still-valid
    /// `lookedUp` (generation, node) saves a look-up.
    @inlinable mutating func write(
        _ key: HashedKey<Key>, _ value: Value, cost: Int, expiresAt: Int64, expiresAtMost: Int64, writtenAt: UInt64,
        lookedUp: (generation: UInt64, node: Int32?)? = nil
    ) -> (node: Int32, count: Int, cost: Int) {
        let token = nextToken()
        let found: Int32?
        if let lookedUp, lookedUp.generation == generation { found = lookedUp.node } else { found = find(key) }
        if let i = found {
            let delta = cost - nodes[Int(i)].cost
            nodes[Int(i)].value = value
            nodes[Int(i)].cost = cost
            nodes[Int(i)].expiresAt = expiresAt
            nodes[Int(i)].expiresAtMost = expiresAtMost
            nodes[Int(i)].stamp = token
            nodes[Int(i)].writtenAt = writtenAt
            return (i, 0, delta)
        }
        let i = insert(LRUNode(key: key, value: value, cost: cost, expiresAt: expiresAt, expiresAtMost: expiresAtMost,
                               stamp: token, writtenAt: writtenAt, policyID: -1))
        return (i, 1, cost)
    }

    @usableFromInline static var readLogCapacity: Int { 64 }

    @inlinable init() {}

    @inlinable func home(_ hash: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(UInt(bitPattern: hash)) &* 0x9E37_79B9_7F4A_7C15) >> slotShift)
    }

    @inlinable func find(_ key: HashedKey<Key>) -> Int32? {
        if slots.isEmpty { return nil }
        let mask = slots.count - 1
        var p = home(key.hash)
        while true {
            let slot = slots[p]
            if slot == 0 { return nil }
            let node = slot - 1
            if let stored = nodes[Int(node)].key, stored.hash == key.hash, stored.key == key.key { return node }
            p = (p + 1) & mask
        }
    }

    /// Adds `node` under `hash`; the caller has made room (``reserveSlot()``).
    @inlinable mutating func indexInsert(_ hash: Int, node: Int32) {
        let mask = slots.count - 1
        var p = home(hash)
        while slots[p] != 0 { p = (p + 1) & mask }
        slots[p] = node + 1
        liveCount += 1
    }

    @inlinable mutating func indexRemove(hash: Int, node: Int32) {
        let mask = slots.count - 1
        var hole = home(hash)
        while slots[hole] != node + 1 { hole = (hole + 1) & mask }
        slots[hole] = 0
        liveCount -= 1
        // Backward shift: pull later members of the probe run into the hole.
        var j = hole
        while true {
            j = (j + 1) & mask
            let slot = slots[j]
            if slot == 0 { return }
            let ideal = home(nodes[Int(slot - 1)].key?.hash ?? 0)
            let between = hole <= j ? (hole < ideal && ideal <= j) : (hole < ideal || ideal <= j)
            if !between {
                slots[hole] = slot
                slots[j] = 0
                hole = j
            }
        }
    }

    /// Grows the index, if needed, so one more key keeps the load at most 1/2.
    @inlinable mutating func reserveSlot() {
        if (liveCount + 1) * 2 > slots.count { growIndex() }
    }

    @inlinable mutating func growIndex() {
        let size = max(16, slots.count * 2)
        slots = [Int32](repeating: 0, count: size)
        slotShift = UInt64(64 - size.trailingZeroBitCount)
        liveCount = 0
        for i in nodes.indices {
            if let key = nodes[i].key { indexInsert(key.hash, node: Int32(i)) }
        }
    }

    /// Records a hit on node `i` (applied to the list later) and counts it
    /// for the inspector, in the same access to the node (counted when the
    /// log replays instead, a hit cost 968 instructions, not 935).
    @inlinable mutating func recordRead(_ i: Int32, stamp: UInt64) {
        Self.stampRead(&nodes[Int(i)], stamp: stamp)
        if head == i && readLog.isEmpty { return }
        if readLog.capacity == 0 { readLog.reserveCapacity(Self.readLogCapacity) }
        readLog.append((i, stamp))
        if readLog.count >= Self.readLogCapacity { applyReads() }
    }

    /// Stamps a read node and counts the hit (one access: each checks the array).
    @inlinable @inline(__always) static func stampRead(_ node: inout LRUNode<Key, Value>, stamp: UInt64) {
        node.stamp = stamp
        node.hits.addSaturating(1)
    }

    @usableFromInline static var policyReadCapacity: Int { 32 }

    /// Records a policy hit in the shard's `buffer` (dropped if full); returns whether now full.
    @inlinable mutating func recordPolicyRead(_ i: Int32, hash: Int, in buffer: PolicyReadBuffer) -> Bool {
        let capacity = Self.policyReadCapacity
        let count = policyReadCount
        if count >= capacity { return true }
        buffer.slots[count] = PolicyRead(id: nodes[Int(i)].policyID, hash: hash)
        policyReadCount = count + 1
        return count + 1 >= capacity
    }

    @inlinable mutating func applyReads() {
        guard !readLog.isEmpty else { return }
        for (i, stamp) in readLog where nodes[Int(i)].key != nil && nodes[Int(i)].stamp == stamp && head != i {
            unlink(i)
            pushFront(i)
        }
        readLog.removeAll(keepingCapacity: true)
    }

    @inlinable var tailStamp: UInt64 { tail < 0 ? .max : nodes[Int(tail)].stamp }

    @inlinable mutating func unlink(_ i: Int32) {
        guard keepsOrder else { return }
        let prev = nodes[Int(i)].prev, next = nodes[Int(i)].next
        if prev >= 0 { nodes[Int(prev)].next = next } else { head = next }
        if next >= 0 { nodes[Int(next)].prev = prev } else { tail = prev }
        nodes[Int(i)].prev = -1
        nodes[Int(i)].next = -1
    }

    @inlinable mutating func pushFront(_ i: Int32) {
        guard keepsOrder else { return }
        nodes[Int(i)].prev = -1
        nodes[Int(i)].next = head
        if head >= 0 { nodes[Int(head)].prev = i }
        head = i
        if tail < 0 { tail = i }
    }

    /// Moves node `i` to the front now (writes); call ``applyReads()`` first.
    @inlinable mutating func touch(_ i: Int32, stamp: UInt64) {
        nodes[Int(i)].stamp = stamp
        if head != i {
            unlink(i)
            pushFront(i)
        }
    }

    /// Inserts `node`, moved in (a copy would retain key and value to release them).
    @inlinable @discardableResult mutating func insert(_ node: consuming LRUNode<Key, Value>) -> Int32 {
        generation &+= 1
        reserveSlot()
        let hash = node.key?.hash ?? 0
        let i: Int32
        // `removeLast` inlines; `popLast` is a generic call here.
        if !free.isEmpty {
            let reused = free.removeLast()
            i = reused
            nodes[Int(i)] = node
        } else {
            i = Int32(nodes.count)
            nodes.append(node)
        }
        indexInsert(hash, node: i)
        pushFront(i)
        return i
    }

    /// Removes node `i`; returns its cost.
    @inlinable @discardableResult mutating func removeNode(_ i: Int32) -> Int {
        generation &+= 1
        unlink(i)
        let cost = nodes[Int(i)].cost
        // The hash alone: binding the key would copy (retain) it.
        if let hash = nodes[Int(i)].key?.hash { indexRemove(hash: hash, node: i) }
        nodes[Int(i)].key = nil
        nodes[Int(i)].value = nil
        free.append(i)
        return cost
    }

    @inlinable mutating func removeAll() -> (count: Int, cost: Int) {
        let removed = (liveCount, nodes.reduce(0) { $0 + ($1.key == nil ? 0 : $1.cost) })
        let stamp = lastStamp  // tokens are never reused
        let keepsOrder = keepsOrder, generation = generation
        self = LRUShardState()
        lastStamp = stamp
        self.keepsOrder = keepsOrder
        self.generation = generation &+ 1
        return removed
    }
}

/// A shard: its state behind a lock, and its tail stamp published for the lock-free evictor.
@usableFromInline
final class LRUShard<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline let state: Mutex<LRUShardState<Key, Value>>
    /// Keeps `tailStamp` off the lines a state write dirties: the evictor reads
    /// every shard's per eviction, and missed on each one a writer had touched.
    @usableFromInline let stampPadding = CacheLinePadding()
    @usableFromInline let tailStamp = Atomic<UInt64>(.max)
    /// Non-zero while hits wait in `policyReads` (set under the lock; drains skip empty shards).
    @usableFromInline let pendingReads = Atomic<Int>(0)
    /// Hits waiting for the adaptive policy: lossy (past capacity dropped, not
    /// waited for), drained under the policy lock; outside `state` to keep it small.
    @usableFromInline let policyReads = PolicyReadBuffer(capacity: LRUShardState<Key, Value>.policyReadCapacity)
    /// 128 bytes after the hot fields: shards are allocated back to back, and a lock
    /// word sharing a line (or prefetch pair) with the next shard's bounced.
    @usableFromInline let padding = (CacheLinePadding(), CacheLinePadding())

    /// A shard; `keepsOrder` links its entries in recency order (`.lru`).
    @inlinable init(keepsOrder: Bool = true) {
        var state = LRUShardState<Key, Value>()
        state.keepsOrder = keepsOrder
        self.state = Mutex(state)
    }

    deinit { policyReads.deallocate() }

    /// Replays pending reads, then publishes the tail's stamp, which the evictor
    /// needs never newer than the real tail's (a read tail is fresh until replayed).
    @inlinable func publishTail(_ state: inout LRUShardState<Key, Value>) {
        state.applyReads()
        // Stored only when it changes: the evictor reads every shard's.
        let stamp = state.tailStamp
        if tailStamp.load(ordering: .relaxed) != stamp { tailStamp.store(stamp, ordering: .relaxed) }
    }
}

/// One hit waiting for the adaptive policy.
@usableFromInline
struct PolicyRead: Sendable {
    @usableFromInline var id: Int32
    @usableFromInline var hash: Int
    @inlinable init(id: Int32, hash: Int) {
        self.id = id
        self.hash = hash
    }
}

/// A shard's fixed buffer of hits for the adaptive policy. `@unchecked Sendable`:
/// used only under the shard's `state` lock (``LRUShardState/recordPolicyRead(_:hash:in:)``,
/// the drain) and freed in its `deinit`, when no one can hold it.
@usableFromInline
struct PolicyReadBuffer: @unchecked Sendable {
    @usableFromInline let slots: UnsafeMutablePointer<PolicyRead>

    @inlinable init(capacity: Int) {
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: PolicyRead(id: -1, hash: 0), count: capacity)
    }

    @inlinable func deallocate() { slots.deallocate() }
}

extension UInt32 {
    /// Adds `n`, stopping at `.max` (a hit count that cannot wrap to 0).
    @inlinable mutating func addSaturating(_ n: UInt32) {
        let (sum, overflow) = addingReportingOverflow(n)
        self = overflow ? .max : sum
    }
}

extension HashedKey: Sendable where Key: Sendable {}
extension LRUNode: Sendable where Key: Sendable, Value: Sendable {}
extension LRUShardState: Sendable where Key: Sendable, Value: Sendable {}
