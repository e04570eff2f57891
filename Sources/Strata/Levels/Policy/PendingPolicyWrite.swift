/// A write to an adaptive memory level that reached its shard while another
/// thread held the policy lock: the key, and the token its shard node carried
/// at that write. The lock's next holder applies it (inserts the node into the
/// policy, or counts a cost change as a use); a token that no longer matches
/// means the node was removed or rewritten since, and a later write has its
/// own record.
@usableFromInline
struct PendingPolicyWrite<Key: Hashable & Sendable>: Sendable {
    @usableFromInline let key: HashedKey<Key>
    @usableFromInline let token: UInt64

    @inlinable init(key: HashedKey<Key>, token: UInt64) {
        self.key = key
        self.token = token
    }
}
