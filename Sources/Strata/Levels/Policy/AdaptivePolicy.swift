// Design notes: adaptive W-TinyLFU for the memory and disk levels.
//
// The memory level keeps its entries in shards (see LRUShard), the disk level
// in files (see DiskIndex); this type keeps only the policy's view of them,
// by id, behind the level's lock. (Entries a disk level finds at start enter
// probation directly, unread: `insert(_:cost:restored:)`.)
//
//   new entry ──▶ window (LRU) ──overflow──▶ probation ──hit──▶ protected
//                                               ▲                   │
//                                               └────overflow───────┘
//
// - The window takes every new entry, so a burst of new keys is served while
//   it is recent. Its share of the capacity follows ghost hits
//   (`WindowAdapter`): misses on keys the window recently let go grow it
//   (recency-heavy workloads), misses on keys main recently evicted shrink it
//   (frequency-heavy ones). When the share grows, main's least recent
//   entries move into the window at once (Caffeine's way), so the window
//   is the size its share says: a window that could grow only by winning
//   duels lagged behind a share that kept climbing on the ghost hits of the
//   too-small window (a Zipf replay reached 30–50% while 1% was best).
//   Hits in probation also pull the share toward main while main evicts
//   too little for its ghosts to speak (loops a little longer than the
//   cache, small caches: see `WindowAdapter`), and the share stays at
//   least 1%. When the share shrinks, the window's excess joins probation
//   without a duel: only as many of the window's overflow as entries
//   arrived since the last eviction are candidates (`arrivals`), so a
//   shrinking window does not throw out main's entries it had just taken.
// - The main region is segmented LRU: probation holds entries seen once in
//   main, protected (80% of main) those hit again.
// - When the level is over capacity, entries pushed out of the window
//   (candidates, at probation's most-recent end) duel probation's least
//   recent entries (victims): the one the frequency sketch has seen less
//   often is evicted. A candidate that loses is an admission rejected. A
//   candidate with a high count is admitted at random one time in 128 even
//   if it loses, so crafted collisions cannot pin a victim forever; not on
//   a tie below 15 (the top count), which is no sign of an attack: on a
//   loop every key ties, and those random admissions cost 7 points on a
//   loop over 1,011 keys at 758 entries.
// - While the window is at its floor (the adapter finds that recency does
//   not pay: loops, skewed popularity), a candidate must lead a victim
//   seen twice or more by two counts, not one. On a loop the candidate's
//   count includes the request that made it a candidate while the victim,
//   main's least recent entry, is the key requested next, its request
//   still to come; after each halving of the sketch, keys requested since
//   lead keys requested before by one count that is only the loop's phase.
//   Won by one count, those duels replaced probation's whole content with
//   keys evicted again before their turn, cycle after cycle: a loop over
//   1,011 keys at 505 entries hit 399 keys a cycle instead of 500 for
//   three cycles in five (43.7% against W-TinyLFU's 46.6%; now 47.5%), 400
//   keys at 300 entries 66.2% against 71.7% (now 72.8%). A larger window
//   (recency-heavy traces) keeps the one-count rule: sprite @ 1000 lost
//   0.2 points to the two-count rule, and sits on its mark. So does a
//   cache whose floor is a one-entry window (under 200 entries): ps @ 50
//   lost 0.07 points to it, and fell below its mark.
// - Sizes are costs: the window, protected region and capacity are measured
//   in cost units and, with a count limit, in entries too.
// - A hit on the window's most recent entry (the key requested again at
//   once) is not counted in the sketch: a burst of back-to-back requests is
//   one use, not several that outweigh keys requested at intervals (multi2
//   @ 2000 gains 0.3 to 0.5 points; libCacheSim's W-TinyLFU counts no
//   window hit at all, which costs recency-heavy traces whose window is
//   large).
// - Reads reach the policy through lossy per-shard buffers drained under the
//   eviction lock before every decision, so a single-threaded replay is
//   deterministic and concurrent readers never take this lock. A write that
//   finds the lock held reaches the policy later, through the memory level's
//   pending writes (`PendingPolicyWrite`), applied by the holder.

/// Where a policy node lives.
@usableFromInline
enum PolicyRegion: UInt8, Sendable {
    case window, probation, protected, free
}

/// One entry as the policy sees it; `prev` points to less recent entries.
///
/// It holds the key's hash, not the key: the sketch and the ghost lists need
/// only the hash, and the level finds its entry again by the slot it gave
/// (``AdaptivePolicy/slots``). A node holding the key was twice the size and
/// retained and released the key at every insert, duel and eviction (about
/// a fifth of an evicting set's instructions with `String` keys).
@usableFromInline
struct PolicyNode: Sendable {
    @usableFromInline var hash: Int
    @usableFromInline var cost: Int
    @usableFromInline var region: PolicyRegion
    @usableFromInline var prev: Int32 = -1
    @usableFromInline var next: Int32 = -1
    /// Uses since the entry was admitted (saturating), for the inspector: in
    /// the padding after `next` (the node stays 32 bytes), counted by
    /// ``AdaptivePolicy/access(_:hash:)`` on the line it already touches.
    @usableFromInline var hits: UInt32 = 0

    @inlinable init(hash: Int, cost: Int, region: PolicyRegion) {
        self.hash = hash
        self.cost = cost
        self.region = region
    }
}

/// An entry the policy let go: its id (already free for reuse once the
/// callback returns), its key's hash and the slot the level gave for it.
@usableFromInline
struct PolicyExit: Sendable {
    @usableFromInline let id: Int32
    @usableFromInline let hash: Int
    @usableFromInline let slot: Int32

    @inlinable init(id: Int32, hash: Int, slot: Int32) {
        self.id = id
        self.hash = hash
        self.slot = slot
    }
}

/// An access-ordered list of policy nodes with its totals: `first` is least recent.
@usableFromInline
struct PolicyList: Sendable {
    @usableFromInline var first: Int32 = -1
    @usableFromInline var last: Int32 = -1
    @usableFromInline var cost = 0
    @usableFromInline var count = 0
    @inlinable init() {}
}

/// The most the window and the protected region may hold at one window
/// share, in whole cost units and entries: a region of `c` exceeds a share
/// `x` of the capacity exactly when `c > floor(x)`, so the comparisons made
/// on every eviction are of integers (the same decisions as comparing the
/// `Double`s, without converting and multiplying each time).
@usableFromInline
struct RegionLimits: Sendable {
    @usableFromInline let share: Double
    @usableFromInline let windowCost: Int
    @usableFromInline let windowCount: Int
    @usableFromInline let protectedCost: Int
    @usableFromInline let protectedCount: Int

    @inlinable init(share: Double, capacity: Int, countLimit: Int?) {
        self.share = share
        let protectedShare = (1 - share) * 0.8
        windowCost = Self.floor(share * Double(capacity))
        protectedCost = Self.floor(protectedShare * Double(capacity))
        windowCount = countLimit.map { Self.floor(share * Double($0)) } ?? .max
        protectedCount = countLimit.map { Self.floor(protectedShare * Double($0)) } ?? .max
    }

    @inlinable static func floor(_ x: Double) -> Int {
        x >= Double(Int.max) ? .max : Int(x.rounded(.down))
    }
}

/// The W-TinyLFU policy state of one memory level (see the notes above).
@usableFromInline
struct AdaptivePolicy: Sendable {
    @usableFromInline var nodes: [PolicyNode] = []
    @usableFromInline var free: [Int32] = []
    /// Where the level keeps each node's entry (the memory level: its node
    /// in the key's shard; the disk level: its index node), handed back on
    /// eviction: the level finds the entry there, checking that it still
    /// names this id. Beside the nodes, not in them: only evictions read it.
    @usableFromInline var slots: [Int32] = []
    @usableFromInline var window = PolicyList()
    @usableFromInline var probation = PolicyList()
    @usableFromInline var protected = PolicyList()
    @usableFromInline var sketch: FrequencySketch
    /// Chooses the window's share from ghost hits.
    @usableFromInline var adapter = WindowAdapter()
    @usableFromInline var capacity: Int
    @usableFromInline var countLimit: Int?
    @usableFromInline var admissionsRejected = 0
    /// New entries since the last ``evict(_:)``: only that many of the window's overflow are candidates.
    @usableFromInline var arrivals = 0
    @usableFromInline var random: UInt64 = 0x2545_F491_4F6C_DD1D

    /// The window's and protected region's sizes for the share they were
    /// computed at (see ``RegionLimits``).
    @usableFromInline var limits: RegionLimits
    /// Whether a window at its floor asks candidates for a two-count lead:
    /// when that floor holds two entries or more (200 slots and up; see the
    /// notes above).
    @usableFromInline var leadAtFloor: Bool

    @inlinable init(capacity: Int, countLimit: Int?) {
        self.capacity = capacity
        self.countLimit = countLimit
        sketch = FrequencySketch(entries: min(countLimit ?? capacity, 1024))
        adapter = WindowAdapter(slots: countLimit ?? capacity)
        limits = RegionLimits(share: adapter.share, capacity: capacity, countLimit: countLimit)
        leadAtFloor = adapter.least * Double(countLimit ?? capacity) >= 2
    }

    /// New limits for a level resized in place: the window's floor, the
    /// regions' sizes and the lead rule follow them; what the policy learnt
    /// (sketch, ghosts, the share) is kept. The caller then calls
    /// ``evict(_:)`` to come within them.
    @usableFromInline mutating func resize(capacity: Int, countLimit: Int?) {
        self.capacity = capacity
        self.countLimit = countLimit
        adapter.resize(slots: countLimit ?? capacity)
        limits = RegionLimits(share: adapter.share, capacity: capacity, countLimit: countLimit)
        leadAtFloor = adapter.least * Double(countLimit ?? capacity) >= 2
    }

    /// Recomputes ``limits`` if the window's share moved since.
    @inlinable @inline(__always) mutating func refreshLimits() {
        if limits.share != adapter.share {
            limits = RegionLimits(share: adapter.share, capacity: capacity, countLimit: countLimit)
        }
    }

    @inlinable var totalCost: Int { window.cost + probation.cost + protected.cost }
    @inlinable var totalCount: Int { window.count + probation.count + protected.count }
    @inlinable var overLimits: Bool {
        totalCost > capacity || (countLimit.map { totalCount > $0 } ?? false)
    }

    /// Whether the window holds more than its share (call ``refreshLimits()`` first).
    @inlinable var windowExceeds: Bool { window.cost > limits.windowCost || window.count > limits.windowCount }

    /// Whether the protected region holds more than its share (call ``refreshLimits()`` first).
    @inlinable var protectedExceeds: Bool {
        protected.cost > limits.protectedCost || protected.count > limits.protectedCount
    }

    // MARK: Lists

    @inlinable mutating func withList<R>(_ region: PolicyRegion, _ body: (inout PolicyList) -> R) -> R {
        switch region {
        case .window: return body(&window)
        case .probation: return body(&probation)
        case .protected, .free: return body(&protected)
        }
    }

    @inlinable @inline(__always) mutating func unlink(_ id: Int32) {
        // In one borrow of the buffer: each subscript write checks that the
        // array is not shared.
        let (region, cost, prev, next) = nodes.withUnsafeMutableBufferPointer { nodes in
            let prev = nodes[Int(id)].prev, next = nodes[Int(id)].next
            if prev >= 0 { nodes[Int(prev)].next = next }
            if next >= 0 { nodes[Int(next)].prev = prev }
            nodes[Int(id)].prev = -1
            nodes[Int(id)].next = -1
            return (nodes[Int(id)].region, nodes[Int(id)].cost, prev, next)
        }
        withList(region) { list in
            if list.first == id { list.first = next }
            if list.last == id { list.last = prev }
            list.cost -= cost
            list.count -= 1
        }
    }

    /// Appends `id` as the most recent entry of `region`.
    @inlinable @inline(__always) mutating func append(_ id: Int32, to region: PolicyRegion) {
        let cost = nodes[Int(id)].cost
        let last = withList(region) { list -> Int32 in
            let last = list.last
            if list.first < 0 { list.first = id }
            list.last = id
            list.cost += cost
            list.count += 1
            return last
        }
        nodes.withUnsafeMutableBufferPointer { nodes in
            nodes[Int(id)].region = region
            nodes[Int(id)].prev = last
            nodes[Int(id)].next = -1
            if last >= 0 { nodes[Int(last)].next = id }
        }
    }

    // MARK: Events

    /// A new entry: it enters the window. Returns its id.
    ///
    /// A `restored` entry (one found on disk at start, oldest first) goes
    /// straight to probation's most recent end without counting as a
    /// request: it has to earn its frequency by being read again, so new
    /// entries are not declined in favour of restored ones nobody reads.
    @inlinable mutating func insert(hash: Int, cost: Int, restored: Bool = false, slot: Int32) -> Int32 {
        let node = PolicyNode(hash: hash, cost: cost, region: restored ? .probation : .window)
        let id: Int32
        // `removeLast` inlines; `popLast` is a generic call here.
        if !free.isEmpty {
            let reused = free.removeLast()
            id = reused
            nodes[Int(id)] = node
            slots[Int(id)] = slot
        } else {
            id = Int32(nodes.count)
            nodes.append(node)
            slots.append(slot)
        }
        append(id, to: restored ? .probation : .window)
        sketch.ensureCapacity(totalCount)
        if !restored {
            arrivals += 1
            sketch.increment(hash)
            adapter.recordMiss(hash, entries: totalCount)
        }
        return id
    }

    /// A hit on `id` (recorded by a reader; `hash` guards against a reused id).
    @inlinable mutating func access(_ id: Int32, hash: Int) {
        guard id >= 0, Int(id) < nodes.count, nodes[Int(id)].region != .free, nodes[Int(id)].hash == hash else { return }
        // Requested again at once: one use (see the notes above).
        if window.last != id { sketch.increment(hash) }
        nodes[Int(id)].hits.addSaturating(1)
        if nodes[Int(id)].region == .probation {
            adapter.recordProbationHit(probation: probation.count, entries: totalCount)
        }
        touch(id)
    }

    /// The uses of `id` counted by ``access(_:hash:)``, if `id` is still the entry of `hash`.
    @inlinable func hits(_ id: Int32, hash: Int) -> UInt32? {
        guard id >= 0, Int(id) < nodes.count, nodes[Int(id)].region != .free, nodes[Int(id)].hash == hash else { return nil }
        return nodes[Int(id)].hits
    }

    /// Moves `id` to the most recent end of its region (promoting from probation).
    @inlinable mutating func touch(_ id: Int32) {
        let region = nodes[Int(id)].region
        guard region != .free else { return }
        unlink(id)
        switch region {
        case .window: append(id, to: .window)
        case .probation, .protected:
            append(id, to: .protected)
            demoteProtectedOverflow()
        case .free: break
        }
    }

    /// The value of `id` was replaced: its cost changes and it counts as a use.
    @inlinable mutating func update(_ id: Int32, cost: Int) {
        guard id >= 0, Int(id) < nodes.count, nodes[Int(id)].region != .free else { return }
        let delta = cost - nodes[Int(id)].cost
        nodes[Int(id)].cost = cost
        withList(nodes[Int(id)].region) { $0.cost += delta }
        sketch.increment(nodes[Int(id)].hash)
        touch(id)
    }

    /// The entry `id` was rewritten by someone else: its cost changes, and it
    /// does not count as a use.
    @inlinable mutating func resize(_ id: Int32, cost: Int) {
        guard id >= 0, Int(id) < nodes.count, nodes[Int(id)].region != .free else { return }
        let delta = cost - nodes[Int(id)].cost
        nodes[Int(id)].cost = cost
        withList(nodes[Int(id)].region) { $0.cost += delta }
    }

    /// Forgets `id` (removed, expired or evicted).
    @inlinable mutating func remove(_ id: Int32) {
        guard id >= 0, nodes[Int(id)].region != .free else { return }  // -1: never inserted (a pending write)
        unlink(id)
        nodes[Int(id)].region = .free
        free.append(id)
    }

    @inlinable mutating func removeAll() {
        let kept = (sketch, adapter, admissionsRejected)
        self = AdaptivePolicy(capacity: capacity, countLimit: countLimit)
        (sketch, adapter, admissionsRejected) = kept
    }

    @inlinable mutating func demoteProtectedOverflow() {
        refreshLimits()
        while protected.count > 1 && protectedExceeds {
            let id = protected.first
            unlink(id)
            append(id, to: .probation)
        }
    }

    // MARK: Eviction

    /// Removes entries until the level is within its limits and calls
    /// `evicted` with each one, least wanted first. Call it
    /// after every insert: it also moves the window's overflow to probation.
    @inlinable mutating func evict(_ evicted: (PolicyExit) -> Void) {
        // The share may have moved since the last call.
        demoteProtectedOverflow()
        growWindowToShare()
        // Window overflow becomes candidates at probation's most recent end.
        var candidates = 0
        while window.count > 0 && windowExceeds {
            let id = window.first
            unlink(id)
            append(id, to: .probation)
            candidates += 1
        }
        // Overflow beyond the new arrivals is the window shrinking: those
        // entries join probation without a duel (Caffeine's way).
        candidates = min(candidates, arrivals)
        arrivals = 0
        guard overLimits else { return }
        // Candidates are walked from the newest arrival in probation back,
        // then through the window from its least recent entry; victims from
        // probation's least recent entry on, then protected's, then window's.
        var candidate = candidates > 0 ? probation.last : window.first
        var victim = probation.first
        var victimRegion = PolicyRegion.probation
        while overLimits {
            if (victim < 0 || victim == candidate) && victimRegion == .probation {
                // Probation holds only candidates now: the next one duels protected.
                victimRegion = .protected
                victim = protected.first
                continue
            }
            if victim < 0 && victimRegion == .protected {
                victimRegion = .window
                victim = window.first
                continue
            }
            if victim < 0 && candidate < 0 { return }
            let id: Int32
            if victim < 0 || candidate < 0 || victim == candidate {
                id = victim < 0 ? candidate : victim
            } else if admit(candidate, over: victim) {
                id = victim
            } else {
                id = candidate
                admissionsRejected += 1
            }
            adapter.recordExit(nodes[Int(id)].hash, fromWindow: id == candidate || victimRegion == .window)
            if id == candidate {
                if nodes[Int(id)].region == .probation {
                    candidates -= 1
                    candidate = candidates > 0 ? nodes[Int(id)].prev : window.first
                } else {
                    candidate = nodes[Int(id)].next
                }
            }
            if id == victim { victim = nodes[Int(id)].next }
            drop(id, evicted)
        }
    }

    /// Moves main's least recent entries (probation's, then protected's) to
    /// the window's most recent end while they fit in the window's share.
    @inlinable mutating func growWindowToShare() {
        refreshLimits()
        while window.count < limits.windowCount {
            let id = probation.first >= 0 ? probation.first : protected.first
            guard id >= 0, window.cost + nodes[Int(id)].cost <= limits.windowCost else { return }
            unlink(id)
            append(id, to: .window)
        }
    }

    /// Removes entries until at most `limit` cost units remain (a level
    /// trimmed on request): probation's least recent first, then
    /// protected's, then the window's. No admission duels, nothing counted
    /// as declined, nothing learnt by the window adapter.
    @inlinable mutating func shed(toCost limit: Int, _ evicted: (PolicyExit) -> Void) {
        while totalCost > limit {
            let id = probation.first >= 0 ? probation.first : (protected.first >= 0 ? protected.first : window.first)
            guard id >= 0 else { return }
            drop(id, evicted)
        }
    }

    @inlinable mutating func drop(_ id: Int32, _ evicted: (PolicyExit) -> Void) {
        let hash = nodes[Int(id)].hash
        remove(id)
        evicted(PolicyExit(id: id, hash: hash, slot: slots[Int(id)]))
    }

    /// Whether `candidate` should replace `victim`: it was seen more often
    /// (by two counts while the window is at its floor and the victim was
    /// seen twice or more, on a cache of 200 entries or more: see the notes above).
    @inlinable mutating func admit(_ candidate: Int32, over victim: Int32) -> Bool {
        let candidateCount = sketch.frequency(nodes[Int(candidate)].hash)
        let victimCount = sketch.frequency(nodes[Int(victim)].hash)
        let lead = victimCount >= 2 && adapter.share <= adapter.least && leadAtFloor ? 1 : 0
        if candidateCount > victimCount + lead { return true }
        if candidateCount < 6 { return false }
        // A tie (or a lead within `lead`) is not an attack unless the victim is pinned at the top.
        if candidateCount >= victimCount && victimCount < 15 { return false }
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        return random & 127 == 0
    }
}
