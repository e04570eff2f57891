#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A key with its hash computed once: the shard is chosen from the same hash
/// the shard's dictionary uses, so a lookup hashes the user's key only once.
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
    /// The level-wide access clock at the last read or write.
    @usableFromInline var stamp: UInt64
    @usableFromInline var prev: Int32
    @usableFromInline var next: Int32
    /// The entry's id in the level's ``AdaptivePolicy`` (-1 under `.lru`).
    @usableFromInline var policyID: Int32

    @inlinable init(key: HashedKey<Key>, value: Value, cost: Int, expiresAt: Int64, stamp: UInt64, policyID: Int32 = -1) {
        self.policyID = policyID
        self.key = key
        self.value = value
        self.cost = cost
        self.expiresAt = expiresAt
        self.stamp = stamp
        self.prev = -1
        self.next = -1
    }
}

/// The state of one shard: a dictionary into an index-linked LRU list, most
/// recent at `head`.
///
/// Reads are recorded lazily: a hit stamps its node and appends to `readLog`
/// instead of relinking the list (that write touches three other nodes and
/// costs more than the look-up). The log is replayed in order, skipping
/// entries a later read superseded, before any write to the list, when it is
/// full, and before the evictor trusts `tail`. After a replay the list is
/// ordered by stamp, exactly as if every read had moved its node.
@usableFromInline
struct LRUShardState<Key: Hashable, Value> {
    /// Open-addressing index (linear probing, backward-shift deletion) from
    /// the key's precomputed hash to node index + 1 (0 = empty). Using our own
    /// table means a look-up hashes the user's key once, not twice.
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
    /// Whether the shard links its entries in recency order (`.lru`). Under
    /// `.adaptive` the policy orders them, and linking each new entry into a
    /// list nobody reads touched two more nodes per evicting set (the head's,
    /// and the victim's neighbours').
    @usableFromInline var keepsOrder = true
    /// Changes whenever a key comes or goes (an insert, a removal, a
    /// clearing): a look-up made at one generation holds while it lasts.
    @usableFromInline var generation: UInt64 = 0

    /// The next access stamp: the system's monotonic clock in nanoseconds,
    /// forced above this shard's previous stamp. The clock is the same on
    /// every core and needs no shared write (a level-wide counter made two
    /// threads bounce one cache line on every read), and it orders the
    /// operations of one task exactly even when the task changes threads.
    @inlinable mutating func nextStamp() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        let now = UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec)
        lastStamp = max(now, lastStamp &+ 1)
        return lastStamp
    }

    /// A fresh token for a node written under `.adaptive` (which does not
    /// use stamps): it tells a pending policy write whether it is still the
    /// node's latest (see ``PendingPolicyWrite``).
    @inlinable mutating func nextToken() -> UInt64 {
        lastStamp &+= 1
        return lastStamp
    }

    /// Under `.adaptive`: stores `value` for `key`, in place or as a new
    /// node the policy has not seen yet (`policyID` -1), with a fresh token.
    /// Returns the node and the change in count and cost.
    /// `lookedUp` is a look-up of `key` made earlier (its generation and
    /// node): still valid, it saves finding the key again.
    @inlinable mutating func write(
        _ key: HashedKey<Key>, _ value: Value, cost: Int, expiresAt: Int64,
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
            nodes[Int(i)].stamp = token
            return (i, 0, delta)
        }
        let i = insert(LRUNode(key: key, value: value, cost: cost, expiresAt: expiresAt, stamp: token, policyID: -1))
        return (i, 1, cost)
    }

    @usableFromInline static var readLogCapacity: Int { 64 }

    @inlinable init() {}

    @inlinable func home(_ hash: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(UInt(bitPattern: hash)) &* 0x9E37_79B9_7F4A_7C15) >> slotShift)
    }

    /// The node index for `key`, if present.
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

    /// Records a hit on node `i` (applied to the list later).
    @inlinable mutating func recordRead(_ i: Int32, stamp: UInt64) {
        nodes[Int(i)].stamp = stamp
        if head == i && readLog.isEmpty { return }
        if readLog.capacity == 0 { readLog.reserveCapacity(Self.readLogCapacity) }
        readLog.append((i, stamp))
        if readLog.count >= Self.readLogCapacity { applyReads() }
    }

    @usableFromInline static var policyReadCapacity: Int { 32 }

    /// Records a hit for the adaptive policy in `buffer` (the shard's);
    /// returns whether it is now full (time to drain it). A hit finding it
    /// full is dropped.
    @inlinable mutating func recordPolicyRead(_ i: Int32, hash: Int, in buffer: PolicyReadBuffer) -> Bool {
        let capacity = Self.policyReadCapacity
        let count = policyReadCount
        if count >= capacity { return true }
        buffer.slots[count] = PolicyRead(id: nodes[Int(i)].policyID, hash: hash)
        policyReadCount = count + 1
        return count + 1 >= capacity
    }

    /// Replays recorded reads so the list order reflects them.
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

    /// Inserts `node` (moved in: copying it would retain its key and value
    /// only to release the originals).
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

/// A shard: its state behind a lock, plus its least-recent stamp published
/// for the evictor, which compares shards without locking them.
@usableFromInline
final class LRUShard<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline let state: Mutex<LRUShardState<Key, Value>>
    /// Keeps `tailStamp` off the lines a write to the state dirties: the
    /// evictor reads every shard's stamp for every eviction, and a stamp
    /// beside the state made it miss on each shard a writer had touched.
    @usableFromInline let stampPadding = CacheLinePadding()
    @usableFromInline let tailStamp = Atomic<UInt64>(.max)
    /// Non-zero while hits wait in `policyReads` (written under `state`'s
    /// lock; read without it to skip empty shards when draining).
    @usableFromInline let pendingReads = Atomic<Int>(0)
    /// Hits waiting for the adaptive policy: a lossy buffer, drained under
    /// the level's policy lock; reads past its capacity are dropped rather
    /// than waited for. Outside `state` so that the state stays small.
    @usableFromInline let policyReads = PolicyReadBuffer(capacity: LRUShardState<Key, Value>.policyReadCapacity)
    /// 128 bytes after the hot fields: shards are allocated one after
    /// another, and without it a shard's lock word could share a cache line
    /// (or an adjacent-line prefetch pair) with its neighbour's, so two
    /// threads on different shards would still bounce one line.
    @usableFromInline let padding = (CacheLinePadding(), CacheLinePadding())

    /// A shard; `keepsOrder` links its entries in recency order (`.lru`).
    @inlinable init(keepsOrder: Bool = true) {
        var state = LRUShardState<Key, Value>()
        state.keepsOrder = keepsOrder
        self.state = Mutex(state)
    }

    deinit { policyReads.deallocate() }

    /// Replays pending reads, then publishes the tail's stamp. Replaying first
    /// keeps the invariant the evictor relies on: a published stamp is never
    /// newer than the shard's real least-recent entry (a read tail node carries
    /// a fresh stamp until the list is replayed).
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

/// A shard's fixed buffer of hits for the adaptive policy, allocated once.
///
/// `@unchecked Sendable` is safe because the slots are read and written only
/// by code holding the owning shard's `state` lock (``LRUShardState/recordPolicyRead(_:hash:in:)``
/// and the level's drain, which also keeps the count in that state), and
/// freed in the shard's `deinit`, when no one can hold that lock.
@usableFromInline
struct PolicyReadBuffer: @unchecked Sendable {
    @usableFromInline let slots: UnsafeMutablePointer<PolicyRead>

    @inlinable init(capacity: Int) {
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: PolicyRead(id: -1, hash: 0), count: capacity)
    }

    @inlinable func deallocate() { slots.deallocate() }
}

extension HashedKey: Sendable where Key: Sendable {}
extension LRUNode: Sendable where Key: Sendable, Value: Sendable {}
extension LRUShardState: Sendable where Key: Sendable, Value: Sendable {}
