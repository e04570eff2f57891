extension MemoryCacheLevel {
    /// Whether the level holds a value for `key` now that has not expired,
    /// without counting as a use (tools: the explorer's "kept by L1").
    public func contains(_ key: Key) -> Bool {
        let hashed = HashedKey(key)
        let now = clock.now().nanosecondsSince1970
        return withShard(for: hashed) { shard in
            shard.state.withLock { state in
                guard let i = state.find(hashed) else { return false }
                let expiresAt = state.nodes[Int(i)].expiresAt
                return expiresAt == 0 || now < expiresAt
            }
        }
    }
}
