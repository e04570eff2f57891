import Synchronization

/// The memory level under ``EvictionPolicy/adaptive``: shards hold the
/// entries, ``AdaptivePolicy`` (behind `adaptive`) decides which stay.
/// Writes take the policy lock, then one shard's; reads take only the
/// shard's and leave their hit in its lossy buffer.
extension MemoryCacheLevel {
    /// Sets that admission declined (or that were evicted again before their
    /// first hit in favour of more frequently requested entries), since creation.
    public var admissionsRejected: Int { adaptive.withLock { $0.admissionsRejected } }

    /// The admission window's current share of the capacity (0...1), or
    /// nil under ``EvictionPolicy/lru``.
    public var windowShare: Double? { isAdaptive ? adaptive.withLock { $0.adapter.share } : nil }

    @inlinable
    func adaptiveEntry(_ hashed: HashedKey<Key>, in shard: LRUShard<Key, Value>) -> CacheEntry<Value>? {
        let (entry, expired, full) = shard.state.withLock { state -> (CacheEntry<Value>?, Bool, Bool) in
            guard let i = state.find(hashed) else { return (nil, false, false) }
            let expiresAt = state.nodes[Int(i)].expiresAt
            if expiresAt != 0 && clock.now().nanosecondsSince1970 >= expiresAt { return (nil, true, false) }
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
            adaptive.withLockIfAvailable { drainReads(of: shard, into: &$0) }
        }
        return entry
    }

    /// Publishes that a shard's buffer holds reads once it stops being empty
    /// (call with the shard's lock held, after recording).
    @inlinable @inline(__always)
    func notePendingReads(_ count: Int, in shard: LRUShard<Key, Value>) {
        guard count == 1 else { return }
        shard.pendingReads.store(1, ordering: .relaxed)
        // Released after the shard's mark, so a drain that takes the flag sees it.
        readsPending.store(true, ordering: .releasing)
    }

    /// Applies every buffered hit to the policy (call with its lock held).
    @inlinable
    func drainReads(_ policy: inout AdaptivePolicy<Key>) {
        // A buffer filled after this exchange sets the flag again for the next drain.
        guard readsPending.exchange(false, ordering: .acquiring) else { return }
        // Borrowed from the array's buffer, so that checking 16 shards does
        // not retain and release each of them.
        shards.withUnsafeBufferPointer { shards in
            for index in shards.indices where shards[index].pendingReads.load(ordering: .relaxed) > 0 {
                drainReads(of: shards[index], into: &policy)
            }
        }
    }

    /// Applies one shard's buffered hits (a reader that filled its buffer
    /// drains only that one, so readers of other shards are not locked out).
    @inlinable
    func drainReads(of shard: LRUShard<Key, Value>, into policy: inout AdaptivePolicy<Key>) {
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
        // 0 means "never"; a deadline at or before 1970 is already past.
        let expires = deadline.map { max($0.nanosecondsSince1970, 1) } ?? 0
        // Replacing a value of the same cost changes nothing the policy
        // weighs: it is recorded like a hit, without the policy lock.
        let (replaced, full) = shard.state.withLock { state -> (Bool, Bool) in
            guard let i = state.find(hashed), state.nodes[Int(i)].cost == cost else { return (false, false) }
            state.nodes[Int(i)].value = value
            state.nodes[Int(i)].expiresAt = expires
            let full = state.recordPolicyRead(i, hash: hashed.hash, in: shard.policyReads)
            notePendingReads(state.policyReadCount, in: shard)
            return (true, full)
        }
        if replaced {
            if full { adaptive.withLockIfAvailable { drainReads(of: shard, into: &$0) } }
            return
        }
        adaptive.withLock { policy in
            drainReads(&policy)
            let (countDelta, costDelta) = shard.state.withLock { state -> (Int, Int) in
                if let i = state.find(hashed) {
                    let delta = cost - state.nodes[Int(i)].cost
                    state.nodes[Int(i)].value = value
                    state.nodes[Int(i)].cost = cost
                    state.nodes[Int(i)].expiresAt = expires
                    policy.update(state.nodes[Int(i)].policyID, cost: cost)
                    return (0, delta)
                }
                let id = policy.insert(hashed, cost: cost)
                state.insert(LRUNode(key: hashed, value: value, cost: cost, expiresAt: expires, stamp: 0, policyID: id))
                return (1, cost)
            }
            account(count: countDelta, cost: costDelta)
            var evicted = 0
            policy.evict { key, cost in
                let removed = self.shard(for: key).state.withLock { state -> Bool in
                    guard let i = state.find(key) else { return false }
                    state.removeNode(i)
                    return true
                }
                if removed {
                    account(count: -1, cost: -cost)
                    evicted += 1
                }
            }
            if evicted > 0 { evictionTotal.add(evicted, ordering: .relaxed) }
        }
    }

    /// Removes `hashed` from its shard and the policy; with a time, only if
    /// the entry has expired by then (it may have been replaced meanwhile).
    @inlinable
    func adaptiveRemove(_ hashed: HashedKey<Key>, in shard: LRUShard<Key, Value>, onlyIfExpiredAt now: Int64?) {
        adaptive.withLock { policy in
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
