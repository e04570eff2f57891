// Resizing in place (Caffeine's `policy().eviction().setMaximum()`): the
// limits are atomics every writer compares its totals with, sequentially
// consistent like the totals. A resize stores the new limits, then evicts
// holding the lock evictions take (`.lru`: `evictionLock`; `.adaptive`: the
// policy's). A writer whose addition to the totals came before the resize's
// pass is evicted by it; one whose addition came after reads the new limits
// when it checks them (its load follows its addition, which follows the
// store), and evicts for itself or leaves it to the holder, as any writer.
extension MemoryCacheLevel {
    /// Changes the level's limits while it runs, keeping its entries and
    /// counters. Shrinking evicts down to the new limits by the level's
    /// policy (``EvictionPolicy/lru``: least recently used first;
    /// ``EvictionPolicy/adaptive``: what W-TinyLFU values least), counted in
    /// ``evictions`` (not as declined admissions); growing evicts nothing.
    /// Once it returns, every write that ends afterwards sees the new limits.
    ///
    /// - Parameters:
    ///   - capacity: the new byte capacity (inclusive; clamped to ``largestLimit``).
    ///   - countLimit: the new most entries kept (`nil`: no count limit).
    /// - Returns: the entries this call evicted.
    @discardableResult
    public func resize(capacity: Int, countLimit: Int?) -> Int {
        precondition(capacity >= 0, "capacity must not be negative")
        precondition((countLimit ?? 0) >= 0, "countLimit must not be negative")
        let capacity = min(capacity, Self.largestLimit), countLimit = countLimit.map { min($0, Self.largestLimit) }
        if isAdaptive {
            return withPolicy { policy in
                // Every hit and write so far counts in the choice of what stays.
                drainReads(&policy)
                applyPendingWrites(&policy)
                storeLimits(capacity: capacity, countLimit: countLimit)
                policy.resize(capacity: capacity, countLimit: countLimit)
                // The duels that choose what goes decline nothing new: the
                // entries were admitted, the level is only smaller now.
                let declined = policy.admissionsRejected
                let evicted = evictOverLimits(&policy)
                policy.admissionsRejected = declined
                account(count: -evicted.count, cost: -evicted.cost)
                return evicted.count
            }
        }
        let evicted = evictionLock.withLock { _ -> Int in
            evictorBusy.store(true, ordering: .sequentiallyConsistent)
            defer { evictorBusy.store(false, ordering: .sequentiallyConsistent) }
            storeLimits(capacity: capacity, countLimit: countLimit)
            // Only holders of `evictionLock` add to the evictions under `.lru`.
            let before = evictionTotal.load(ordering: .relaxed)
            _ = evictWhileOverLimits()
            return evictionTotal.load(ordering: .relaxed) - before
        }
        // Writers that left their eviction to this call while it held the lock.
        evict()
        return evicted
    }

    func storeLimits(capacity: Int, countLimit: Int?) {
        capacityLimit.store(capacity, ordering: .sequentiallyConsistent)
        countLimitValue.store(countLimit ?? -1, ordering: .sequentiallyConsistent)
    }
}
