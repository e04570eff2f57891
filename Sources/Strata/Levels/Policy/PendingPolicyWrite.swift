/// A write to an adaptive memory level that reached its shard while another
/// thread held the policy lock: the key's hash (which names the shard), the
/// node it was written to, and the token that node carried at that write.
/// The lock's next holder applies it (inserts the node into the policy, or
/// counts a cost change as a use) without looking the key up again; a token
/// that no longer matches means the node was removed or rewritten since (a
/// reused node has a newer token), and a later write has its own record.
/// Holding no key, a record costs no retain, and the holder no hash probe.
@usableFromInline
struct PendingPolicyWrite: Sendable {
    @usableFromInline let hash: Int
    @usableFromInline let node: Int32
    @usableFromInline let token: UInt64

    @inlinable init(hash: Int, node: Int32, token: UInt64) {
        self.hash = hash
        self.node = node
        self.token = token
    }
}
