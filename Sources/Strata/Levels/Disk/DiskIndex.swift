/// What the disk level knows about one entry file.
struct DiskIndexEntry: Equatable, Sendable {
    /// Bytes of the file (header, key and value).
    var size: Int
    /// Expiry in ns since 1970, or 0 for none.
    var expiresAt: Int64
    /// The version of the file this entry describes.
    var fingerprint: EntryFingerprint
}

/// The disk level's own index: entries by ``EntryID`` in a doubly linked
/// least-recently-used list (indices into `nodes`, most recent at `head`),
/// with the total size of the files it knows, and the eviction decisions.
///
/// Under ``EvictionPolicy/lru`` the least recent entries go first. Under
/// ``EvictionPolicy/adaptive`` the index also feeds an ``AdaptivePolicy``
/// (entries by id, costs in file bytes; its frequency sketch lives in memory
/// and starts empty at each start, when the entries found are restored into
/// the main region unread) and asks it which entries to let go: a new entry
/// that loses admission is among them.
/// The disk level takes its lock on every read anyway, so reads reach the
/// policy directly rather than through a buffer.
///
/// Not thread-safe: ``DiskCacheLevel`` keeps it behind its lock.
struct DiskIndex: Sendable {
    private struct Node: Sendable {
        var id: EntryID
        var entry: DiskIndexEntry
        var prev: Int32
        var next: Int32
        /// The entry's id in `adaptive` (-1 under LRU).
        var policyID: Int32 = -1
    }

    private var positions: [EntryID: Int32] = [:]
    private var nodes: [Node] = []
    private var free: [Int32] = []
    private var head: Int32 = -1
    private var tail: Int32 = -1
    /// Sum of the sizes of the entries.
    private(set) var totalSize = 0
    /// The W-TinyLFU state under ``EvictionPolicy/adaptive``.
    private var adaptive: AdaptivePolicy?
    /// Bytes the level may hold.
    let capacity: Int

    /// An empty index deciding by `policy` for a level of `capacity` bytes.
    init(policy: EvictionPolicy = .lru, capacity: Int = .max) {
        self.capacity = capacity
        if policy == .adaptive { adaptive = AdaptivePolicy(capacity: capacity, countLimit: nil) }
    }

    /// Entries in the index.
    var count: Int { positions.count }

    /// New entries the adaptive policy declined (or let go before their
    /// first read in favour of more frequently read ones); 0 under LRU.
    var admissionsRejected: Int { adaptive?.admissionsRejected ?? 0 }

    /// The adaptive policy's admission window share (0...1), or nil under LRU.
    var windowShare: Double? { adaptive?.adapter.share }

    /// Forgets every entry; the adaptive policy keeps what it learnt of
    /// frequencies and the window.
    mutating func removeAll() {
        positions = [:]
        nodes = []
        free = []
        head = -1
        tail = -1
        totalSize = 0
        adaptive?.removeAll()
    }

    /// Up to `limit` entries with the adaptive sketch's frequency estimate
    /// of each (`nil` under LRU), in no promised order (the key inspector).
    func listing(limit: Int) -> [(id: EntryID, entry: DiskIndexEntry, frequency: Int?)] {
        positions.prefix(max(0, limit)).map { id, i in (id, nodes[Int(i)].entry, adaptive?.sketch.frequency(id.hashValue)) }
    }

    /// The entry for `id`, if known.
    func find(_ id: EntryID) -> DiskIndexEntry? {
        positions[id].map { nodes[Int($0)].entry }
    }

    /// Marks `id` most recently used (a read).
    mutating func touch(_ id: EntryID) {
        guard let i = positions[id] else { return }
        let policyID = nodes[Int(i)].policyID
        if policyID >= 0 { adaptive?.access(policyID, hash: id.hashValue) }
        guard head != i else { return }
        unlink(i)
        pushFront(i)
    }

    /// Adds or replaces `id` as the most recently used entry; a `restored`
    /// one (found at start) does not count as a request for the policy.
    mutating func insert(_ id: EntryID, _ entry: DiskIndexEntry, restored: Bool = false) {
        if let i = positions[id] {
            totalSize += entry.size - nodes[Int(i)].entry.size
            nodes[Int(i)].entry = entry
            let policyID = nodes[Int(i)].policyID
            if policyID >= 0 { adaptive?.update(policyID, cost: entry.size) }
            if head != i {
                unlink(i)
                pushFront(i)
            }
            return
        }
        var node = Node(id: id, entry: entry, prev: -1, next: -1)
        let i = free.last ?? Int32(nodes.count)
        if adaptive != nil {
            node.policyID = adaptive!.insert(hash: id.hashValue, cost: entry.size, restored: restored, slot: i)
        }
        if i < nodes.count {
            free.removeLast()
            nodes[Int(i)] = node
        } else {
            nodes.append(node)
        }
        positions[id] = i
        totalSize += entry.size
        pushFront(i)
    }

    /// Replaces what is known of `id` (another writer rewrote it) without
    /// changing its place in the order.
    mutating func update(_ id: EntryID, _ entry: DiskIndexEntry) {
        guard let i = positions[id] else { return }
        totalSize += entry.size - nodes[Int(i)].entry.size
        nodes[Int(i)].entry = entry
        let policyID = nodes[Int(i)].policyID
        if policyID >= 0 { adaptive?.resize(policyID, cost: entry.size) }
    }

    /// Removes `id`; returns what was known of it.
    @discardableResult
    mutating func remove(_ id: EntryID) -> DiskIndexEntry? {
        guard let i = positions.removeValue(forKey: id) else { return nil }
        unlink(i)
        free.append(i)
        if nodes[Int(i)].policyID >= 0 {
            adaptive?.remove(nodes[Int(i)].policyID)
            nodes[Int(i)].policyID = -1
        }
        totalSize -= nodes[Int(i)].entry.size
        return nodes[Int(i)].entry
    }

    /// Removes and returns the least recently used entry.
    mutating func popLeastRecent() -> (id: EntryID, entry: DiskIndexEntry)? {
        guard tail >= 0 else { return nil }
        let node = nodes[Int(tail)]
        remove(node.id)
        return (node.id, node.entry)
    }

    /// After an insert: removes what the policy lets go until the index is
    /// within its capacity (under `.adaptive`, possibly the new entry) and
    /// returns it.
    mutating func evictOverCapacity() -> [(id: EntryID, entry: DiskIndexEntry)] {
        guard adaptive != nil else { return popLeastRecent(toSize: capacity) }
        var exits: [PolicyExit] = []
        adaptive!.evict { exits.append($0) }
        return removeLetGo(exits) + popLeastRecent(toSize: capacity)  // the policy counts the same bytes: a guard only
    }

    /// Removes entries until at most `size` bytes remain (least recently
    /// used first, or in the policy's order without admission decisions).
    mutating func trim(toSize size: Int) -> [(id: EntryID, entry: DiskIndexEntry)] {
        guard totalSize > size else { return [] }
        guard adaptive != nil else { return popLeastRecent(toSize: size) }
        var exits: [PolicyExit] = []
        adaptive!.shed(toCost: size) { exits.append($0) }
        return removeLetGo(exits) + popLeastRecent(toSize: size)
    }

    private mutating func popLeastRecent(toSize size: Int) -> [(id: EntryID, entry: DiskIndexEntry)] {
        var victims: [(id: EntryID, entry: DiskIndexEntry)] = []
        while totalSize > size, let victim = popLeastRecent() { victims.append(victim) }
        return victims
    }

    /// Removes entries the adaptive policy has already dropped.
    /// (Each is at the slot given to the policy for it, if that node still
    /// names the policy's id.)
    private mutating func removeLetGo(_ exits: [PolicyExit]) -> [(id: EntryID, entry: DiskIndexEntry)] {
        exits.compactMap { exit in
            let i = Int(exit.slot)
            guard i >= 0, i < nodes.count, nodes[i].policyID == exit.id, positions[nodes[i].id] == exit.slot else { return nil }
            nodes[i].policyID = -1  // the policy has already let it go
            let id = nodes[i].id
            return remove(id).map { (id, $0) }
        }
    }

    /// Entries whose expiry is at or before `now`.
    func expired(now: Int64) -> [(id: EntryID, entry: DiskIndexEntry)] {
        positions.values.compactMap { i in
            let node = nodes[Int(i)]
            return node.entry.expiresAt != 0 && now >= node.entry.expiresAt ? (node.id, node.entry) : nil
        }
    }

    private mutating func unlink(_ i: Int32) {
        let prev = nodes[Int(i)].prev, next = nodes[Int(i)].next
        if prev >= 0 { nodes[Int(prev)].next = next } else { head = next }
        if next >= 0 { nodes[Int(next)].prev = prev } else { tail = prev }
        nodes[Int(i)].prev = -1
        nodes[Int(i)].next = -1
    }

    private mutating func pushFront(_ i: Int32) {
        nodes[Int(i)].prev = -1
        nodes[Int(i)].next = head
        if head >= 0 { nodes[Int(head)].prev = i }
        head = i
        if tail < 0 { tail = i }
    }
}
