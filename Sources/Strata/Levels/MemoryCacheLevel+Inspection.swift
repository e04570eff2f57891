extension MemoryCacheLevel: InspectableLevel {
    /// Lists and peeks shard by shard, never holding more than one shard's lock.
    package var inspector: LevelInspector<Key, Value>? {
        LevelInspector(keys: { [self] limit in inspectKeys(limit: limit) }, peek: { [self] key in peek(key) })
    }

    /// Up to `limit` unexpired keys with their cost and TTL left and, under
    /// ``EvictionPolicy/adaptive``, the sketch's frequency estimate. Walks the
    /// shards one at a time (one shard's lock held, then the policy's alone);
    /// counts no use. The level keeps no write time or per-key hits: `age`
    /// and `hits` are `nil`.
    package func inspectKeys(limit: Int) -> [KeyInspection] {
        guard limit > 0 else { return [] }
        let now = clock.now().nanosecondsSince1970
        var found: [(key: Key, hash: Int, cost: Int, expiresAt: Int64)] = []
        for shard in shards where found.count < limit {
            shard.state.withLock { state in
                // By index: copying a whole node would retain its value too.
                for i in state.nodes.indices where found.count < limit {
                    let expiresAt = state.nodes[i].expiresAt
                    guard let key = state.nodes[i].key, expiresAt == 0 || now < expiresAt else { continue }
                    found.append((key.key, key.hash, state.nodes[i].cost, expiresAt))
                }
            }
        }
        let frequencies = isAdaptive ? withPolicy { policy in found.map { policy.sketch.frequency($0.hash) } } : nil
        return found.enumerated().map { index, entry in
            KeyInspection(key: entry.key as? String ?? String(describing: entry.key), size: entry.cost,
                          ttlLeft: KeyInspection.ttlLeft(expiresAt: entry.expiresAt, now: now),
                          frequency: frequencies?[index])
        }
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
