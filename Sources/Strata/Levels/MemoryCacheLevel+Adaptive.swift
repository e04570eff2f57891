#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The memory level under ``EvictionPolicy/adaptive``: shards hold entries,
/// ``AdaptivePolicy`` (behind `adaptive`) decides which stay. Writes take the
/// policy lock, then a shard's; one finding the policy held goes into its
/// shard and `pendingWrites`, applied by the holder before it lets go. Reads
/// take only the shard's lock and leave their hit in its lossy buffer.
extension MemoryCacheLevel {
    /// Sets admission declined (or evicted before their first hit for more requested entries).
    public var admissionsRejected: Int { withPolicy { $0.admissionsRejected } }

    /// The admission window's share of the capacity (0...1); nil under ``EvictionPolicy/lru``.
    public var windowShare: Double? {
        guard isAdaptive else { return nil }
        return withPolicy { $0.adapter.share }
    }

    @inlinable
    func adaptiveEntry(_ hashed: HashedKey<Key>, in shard: LRUShard<Key, Value>) -> CacheEntry<Value>? {
        let (entry, expired, full) = shard.state.withLock { state -> (CacheEntry<Value>?, Bool, Bool) in
            guard let i = state.find(hashed) else { return (nil, false, false) }
            var expiresAt = state.nodes[Int(i)].expiresAt
            if expiresAt != 0 { expiresAt = slidExpiry(of: i, expiresAt: expiresAt, in: &state) }
            if expiresAt < 0 { return (nil, true, false) }
            let full = state.recordPolicyRead(i, hash: hashed.hash, in: shard.policyReads)
            notePendingReads(state.policyReadCount, in: shard)
            let deadline = expiresAt == 0 ? nil : CacheInstant(nanosecondsSince1970: expiresAt)
            return (CacheEntry(value: state.nodes[Int(i)].value!, expiresAt: deadline), false, full)
        }
        if expired {
            CacheContext.noteExpired()
            adaptiveRemove(hashed, in: shard, onlyIfExpiredAt: clock.now().nanosecondsSince1970)
        } else if full {
            // Someone holding the lock will drain it; if not, later hits are dropped.
            if withPolicyUnlessBusy({ drainReads(of: shard, into: &$0) }) != nil { settlePendingWrites() }
        }
        return entry
    }

    /// Publishes that a shard's buffer became non-empty (under its lock, after recording).
    @inlinable @inline(__always)
    func notePendingReads(_ count: Int, in shard: LRUShard<Key, Value>) {
        guard count == 1 else { return }
        shard.pendingReads.store(1, ordering: .relaxed)
        // Released after the shard's mark, so a drain that takes the flag sees it.
        readsPending.store(true, ordering: .releasing)
    }

    /// Applies every buffered hit to the policy (call with its lock held).
    @inlinable
    func drainReads(_ policy: inout AdaptivePolicy) {
        // Loaded before the exchange (else a locked instruction per write); a
        // flag set after the load or the exchange is left for the next drain.
        guard readsPending.load(ordering: .relaxed), readsPending.exchange(false, ordering: .acquiring) else { return }
        // Borrowed, so checking 16 shards does not retain and release each.
        shards.withUnsafeBufferPointer { shards in
            for index in shards.indices where shards[index].pendingReads.load(ordering: .relaxed) > 0 {
                drainReads(of: shards[index], into: &policy)
            }
        }
    }

    /// Applies one shard's buffered hits (a reader that filled its buffer drains
    /// only that one, not locking out other shards' readers). The policy
    /// counts each on its node for the inspector (``AdaptivePolicy/hits(_:hash:)``):
    /// as lossy as the buffer, so hits dropped from a full buffer, and hits on
    /// an entry the policy did not have yet (a write still pending), are not counted.
    @inlinable
    func drainReads(of shard: LRUShard<Key, Value>, into policy: inout AdaptivePolicy) {
        shard.state.withLock { state in
            let slots = shard.policyReads.slots
            for k in 0..<state.policyReadCount { policy.access(slots[k].id, hash: slots[k].hash) }
            state.policyReadCount = 0
            shard.pendingReads.store(0, ordering: .relaxed)
        }
    }

    @inlinable
    func adaptiveStore(
        _ value: Value, forKey hashed: HashedKey<Key>, in shard: LRUShard<Key, Value>, cost: Int, deadline: CacheInstant?
    ) {
        let (expires, expiresAtMost) = storedExpiry(deadline)
        // For the inspector's age (a write's coarse clock read: 23 ns
        // with the fine clock, 7% of an evicting set; hits read none).
        let writtenAt = coarseMonotonicNanoseconds()
        // A same-cost replacement changes nothing the policy weighs: a hit, no policy lock.
        let (replaced, full, lookedUp) = shard.state.withLock { state -> (Bool, Bool, (generation: UInt64, node: Int32?)) in
            let found = state.find(hashed)
            guard let i = found, state.nodes[Int(i)].cost == cost else { return (false, false, (state.generation, found)) }
            state.nodes[Int(i)].value = value
            state.nodes[Int(i)].expiresAt = expires
            state.nodes[Int(i)].expiresAtMost = expiresAtMost
            state.nodes[Int(i)].writtenAt = writtenAt
            let full = state.recordPolicyRead(i, hash: hashed.hash, in: shard.policyReads)
            notePendingReads(state.policyReadCount, in: shard)
            return (true, full, (state.generation, i))
        }
        if replaced {
            if full {
                if withPolicyUnlessBusy({ drainReads(of: shard, into: &$0) }) != nil { settlePendingWrites() }
            }
            return
        }
        // Policy lock free: shard and policy together. Held: into the shard now
        // and `pendingWrites` for the holder (writers do not queue on each other's
        // policy work); the level may be over its limits until the holder evicts,
        // by at most `pendingWriteLimit` writes or the slack of `isFarOverLimits`.
        let appliedNow: Void? = withPolicyUnlessBusy { policy in
            drainReads(&policy)
            applyPendingWrites(&policy)
            let (countDelta, costDelta) = shard.state.withLock { state -> (Int, Int) in
                let written = state.write(hashed, value, cost: cost, expiresAt: expires, expiresAtMost: expiresAtMost,
                                          writtenAt: writtenAt, lookedUp: lookedUp)
                give(written.node, hash: hashed.hash, of: &state, to: &policy)
                return (written.count, written.cost)
            }
            let evicted = evictOverLimits(&policy)
            account(count: countDelta - evicted.count, cost: costDelta - evicted.cost)
        }
        if appliedNow == nil {
            let written = shard.state.withLock { state in
                let written = state.write(hashed, value, cost: cost, expiresAt: expires, expiresAtMost: expiresAtMost,
                                          writtenAt: writtenAt, lookedUp: lookedUp)
                return (count: written.count, cost: written.cost, node: written.node, token: state.nodes[Int(written.node)].stamp)
            }
            account(count: written.count, cost: written.cost)
            let backlog = pendingWrites.withLock { pending -> Int in
                pending.append(PendingPolicyWrite(hash: hashed.hash, node: written.node, token: written.token))
                pendingWriteCount.add(1, ordering: .sequentiallyConsistent)
                return pending.count
            }
            if backlog > Self.pendingWriteLimit || isFarOverLimits {
                // Too far behind: wait for the holder as `evict()` waits for the evictor.
                while policyBusy.load(ordering: .sequentiallyConsistent)
                    && (pendingWriteCount.load(ordering: .sequentiallyConsistent) > Self.pendingWriteLimit || isFarOverLimits) {
                    sched_yield()
                }
            }
        }
        settlePendingWrites()
    }

    /// Writes that may wait for the policy before a writer waits for its lock.
    @inlinable static var pendingWriteLimit: Int { 64 }

    /// Drains hits, applies pending writes and evicts to the limits (policy lock held).
    @inlinable
    func maintain(_ policy: inout AdaptivePolicy) {
        drainReads(&policy)
        applyPendingWrites(&policy)
        let evicted = evictOverLimits(&policy)
        account(count: -evicted.count, cost: -evicted.cost)
    }

    /// Gives the policy every write that reached a shard without it.
    @inlinable
    func applyPendingWrites(_ policy: inout AdaptivePolicy) {
        guard pendingWriteCount.load(ordering: .sequentiallyConsistent) > 0 else { return }
        let writes = pendingWrites.withLock { pending -> [PendingPolicyWrite] in
            defer {
                pending.removeAll(keepingCapacity: true)
                pendingWriteCount.store(0, ordering: .sequentiallyConsistent)
            }
            return pending
        }
        for write in writes {
            withShard(forHash: write.hash) { shard in shard.state.withLock { state in
                let i = Int(write.node)
                guard i < state.nodes.count, state.nodes[i].key != nil, state.nodes[i].stamp == write.token else { return }
                give(write.node, hash: write.hash, of: &state, to: &policy)
            } }
        }
    }

    /// Gives the policy a node just written: inserted if new, else its cost updated (a use).
    @inlinable
    func give(
        _ i: Int32, hash: Int, of state: inout LRUShardState<Key, Value>, to policy: inout AdaptivePolicy
    ) {
        let cost = state.nodes[Int(i)].cost
        if state.nodes[Int(i)].policyID >= 0 {
            policy.update(state.nodes[Int(i)].policyID, cost: cost)
        } else {
            state.nodes[Int(i)].policyID = policy.insert(hash: hash, cost: cost, slot: i)
        }
    }

    /// Evicts what the policy chooses until within the limits; returns the
    /// entries and cost that left the shards (the shard's cost: a change may
    /// still wait for the policy), for the caller to take off the totals with
    /// its own change: that hot line touched once, or not at all if they cancel.
    @inlinable
    func evictOverLimits(_ policy: inout AdaptivePolicy) -> (count: Int, cost: Int) {
        var evicted = 0, evictedCost = 0
        policy.evict { exit in
            // A node at the policy's slot with another policy id is another entry.
            let cost = withShard(forHash: exit.hash) { shard in shard.state.withLock { state -> Int? in
                let i = Int(exit.slot)
                guard i >= 0, i < state.nodes.count, state.nodes[i].policyID == exit.id,
                      state.nodes[i].key?.hash == exit.hash else { return nil }
                return state.removeNode(exit.slot)
            } }
            if let cost {
                evicted += 1
                evictedCost += cost
            }
        }
        if evicted > 0 { evictionTotal.add(evicted, ordering: .relaxed) }
        return (evicted, evictedCost)
    }

    /// Runs `body` with the policy lock, then ``settlePendingWrites()``.
    @inlinable
    func withPolicy<R>(_ body: (inout AdaptivePolicy) -> R) -> R {
        let result = holdingPolicy(body)
        settlePendingWrites()
        return result
    }

    /// Runs `body` with the policy lock unless another thread holds it (then
    /// nil; the caller settles pending writes). Reads `policyBusy`, no try-lock (a
    /// failed try is a syscall with Linux `Mutex`): waits only as a holder comes or goes.
    @inlinable
    func withPolicyUnlessBusy<R>(_ body: (inout AdaptivePolicy) -> R) -> R? {
        guard !policyBusy.load(ordering: .sequentiallyConsistent) else { return nil }
        return holdingPolicy(body)
    }

    @inlinable
    func holdingPolicy<R>(_ body: (inout AdaptivePolicy) -> R) -> R {
        adaptive.withLock { policy in
            policyBusy.store(true, ordering: .sequentiallyConsistent)
            defer { policyBusy.store(false, ordering: .sequentiallyConsistent) }
            return body(&policy)
        }
    }

    /// Applies writes left pending while another thread held the policy, unless
    /// a holder will (`policyBusy`): every holder clears the flag before
    /// releasing, then comes here, so none waits for the next holder. (A writer
    /// adds its record, then sees the flag; the holder clears it, then reads
    /// the count: sequentially consistent, it sees the record.)
    @inlinable
    func settlePendingWrites() {
        while pendingWriteCount.load(ordering: .sequentiallyConsistent) > 0 {
            guard withPolicyUnlessBusy({ maintain(&$0) }) != nil else { return }
        }
    }

    /// Removes `hashed` from shard and policy; with `now`, only if expired by then (may be replaced).
    @inlinable
    func adaptiveRemove(_ hashed: HashedKey<Key>, in shard: LRUShard<Key, Value>, onlyIfExpiredAt now: Int64?) {
        withPolicy { policy in
            let cost = shard.state.withLock { state -> Int? in
                guard let i = state.find(hashed) else { return nil }
                if let now {
                    let expires = state.nodes[Int(i)].expiresAt
                    guard expires != 0 && now >= expires else { return nil }
                }
                policy.remove(state.nodes[Int(i)].policyID)
                return state.removeNode(i)
            }
            if let cost { account(count: -1, cost: -cost) }
        }
    }
}
