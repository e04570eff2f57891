/// What the inspector copies of one live node (its key, not its value).
struct InspectedNode<Key: Hashable> {
    let key: Key
    let hash: Int
    let cost: Int
    let expiresAt: Int64
    let writtenAt: UInt64
    /// `.lru`'s count (under `.adaptive` the policy's, by ``policyID``).
    let hits: UInt32
    let policyID: Int32

    /// Node `i` of `state`, if it holds a key unexpired at `now`.
    init?<Value>(of i: Int, in state: borrowing LRUShardState<Key, Value>, now: Int64) {
        let expiresAt = state.nodes[i].expiresAt
        guard let key = state.nodes[i].key, expiresAt == 0 || now < expiresAt else { return nil }
        self.key = key.key
        hash = key.hash
        cost = state.nodes[i].cost
        self.expiresAt = expiresAt
        writtenAt = state.nodes[i].writtenAt
        hits = state.nodes[i].hits
        policyID = state.nodes[i].policyID
    }

    /// As the inspector lists it, `writtenNow` being the monotonic clock now.
    func inspection(now: Int64, writtenNow: UInt64, frequency: Int?, hits: UInt32? = nil) -> KeyInspection {
        KeyInspection(key: key as? String ?? String(describing: key), size: cost,
                      age: .nanoseconds(Int64(clamping: writtenNow &- min(writtenAt, writtenNow))),
                      ttlLeft: KeyInspection.ttlLeft(expiresAt: expiresAt, now: now),
                      hits: Int(hits ?? self.hits), frequency: frequency)
    }
}
