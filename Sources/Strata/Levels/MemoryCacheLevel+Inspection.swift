extension MemoryCacheLevel: InspectableLevel {
    /// Lists, ranks and peeks shard by shard, never holding more than one shard's lock.
    package var inspector: LevelInspector<Key, Value>? {
        LevelInspector(keys: { [self] limit in inspectKeys(limit: limit) }, peek: { [self] key in peek(key) },
                       hottest: { [self] count in hotKeys(count) })
    }

    /// Up to `limit` unexpired keys with their cost, TTL left, age (since the
    /// value was last set or back-filled; under `.adaptive` to the system's
    /// coarse clock, up to 4 ms more), hits and, under
    /// ``EvictionPolicy/adaptive``, the sketch's frequency estimate. Walks the
    /// shards one at a time (one shard's lock held, then the policy's alone);
    /// counts no use.
    ///
    /// Hits are counted since the key entered the level (a rewrite keeps
    /// them). Under `.lru` every hit counts. Under `.adaptive` a hit counts
    /// when its shard's buffer drains into the policy (after 32 hits in the
    /// shard, or the next write), so up to 31 per shard may not show yet, and
    /// hits the buffer dropped (full while another thread held the policy)
    /// never do; a same-size rewrite counts as one, as it does for the policy.
    package func inspectKeys(limit: Int) -> [KeyInspection] {
        guard limit > 0 else { return [] }
        let now = clock.now().nanosecondsSince1970, written = monotonicNanoseconds()
        var found: [InspectedNode<Key>] = []
        for shard in shards where found.count < limit {
            shard.state.withLock { state in
                // By index: copying a whole node would retain its value too.
                for i in state.nodes.indices where found.count < limit {
                    if let node = InspectedNode(of: i, in: state, now: now) { found.append(node) }
                }
            }
        }
        // Under `.adaptive` the policy has the frequency and hits (0 for an entry not admitted yet).
        let figures = isAdaptive ? withPolicy { policy in
            found.map { (policy.sketch.frequency($0.hash), policy.hits($0.policyID, hash: $0.hash) ?? 0) }
        } : nil
        return found.enumerated().map { index, node in
            node.inspection(now: now, writtenNow: written, frequency: figures?[index].0, hits: figures?[index].1)
        }
    }

    /// The `count` hottest unexpired keys of the whole level: by the sketch's
    /// frequency estimate, then hits (under `.lru`, hits alone), then key.
    ///
    /// Work per call: one pass over every entry, shard by shard, each shard's
    /// lock held for its own walk only (under `.adaptive` with the policy's
    /// lock, taken first as writes take it, to read the sketch), into a heap
    /// of `count`: O(entries + kept × log `count`); a key is copied only
    /// when it enters the heap. Counts no use.
    package func hotKeys(_ count: Int) -> HotKeys {
        let now = clock.now().nanosecondsSince1970, written = monotonicNanoseconds()
        var heap = TopHeap<KeyInspection>(limit: count, isHigher: KeyInspection.isHotter)
        var examined = 0
        // `policy`: under `.adaptive`, its frequency estimate and hits.
        func walk(_ state: inout LRUShardState<Key, Value>, _ policy: AdaptivePolicy?) {
            // By index: copying a whole node would retain its key and value.
            for i in state.nodes.indices {
                let expiresAt = state.nodes[i].expiresAt
                guard let hash = state.nodes[i].key?.hash, expiresAt == 0 || now < expiresAt else { continue }
                examined += 1
                let frequency = policy?.sketch.frequency(hash)
                let hits = policy.map { $0.hits(state.nodes[i].policyID, hash: hash) ?? 0 } ?? state.nodes[i].hits
                let heat = (frequency ?? 0, Int(hits))
                // Below the least kept: not built (a tie is, to rank by key).
                guard heat != (0, 0), heap.lowest.map({ heat >= $0.heat }) ?? true,
                      let node = InspectedNode(of: i, in: state, now: now) else { continue }
                heap.offer(node.inspection(now: now, writtenNow: written, frequency: frequency, hits: hits))
            }
        }
        guard count > 0 else { return HotKeys(keys: [], examined: 0, isWholeLevel: true) }
        for shard in shards {
            if isAdaptive {
                withPolicy { policy in shard.state.withLock { walk(&$0, policy) } }
            } else {
                shard.state.withLock { walk(&$0, nil) }
            }
        }
        return HotKeys(keys: heap.sorted(), examined: examined, isWholeLevel: true)
    }

    /// The value stored for `key` with its expiry and cost, `nil` if none or
    /// expired; not a use (no recency, no policy hit, the expired entry left
    /// for the next read or sweep to remove).
    package func peek(_ key: Key) -> PeekedEntry<Value>? {
        let hashed = HashedKey(key)
        let now = clock.now().nanosecondsSince1970
        return withShard(for: hashed) { shard in
            shard.state.withLock { state -> PeekedEntry<Value>? in
                guard let i = state.find(hashed), let value = state.nodes[Int(i)].value else { return nil }
                let node = state.nodes[Int(i)]
                guard node.expiresAt == 0 || now < node.expiresAt else { return nil }
                return PeekedEntry(value: value, expiresAt: node.expiresAt == 0 ? nil : CacheInstant(nanosecondsSince1970: node.expiresAt),
                                   size: node.cost)
            }
        }
    }
}
