// Sliding expiry (Caffeine's `expireAfterAccess`): with `slidingExpiry`, an
// entry not read or written for that long expires; a TTL it has still ends
// it (the slide never passes the TTL's deadline, kept in `expiresAtMost`).
// Each node's `expiresAt` is the deadline in force: a write sets it to
// `now + slidingExpiry` (capped), a hit moves it so, under the shard lock it
// already holds. Peeks (`contains`) do not slide. Off, it costs a hit one
// test of a constant.
extension MemoryCacheLevel {
    /// The deadline a write stores, and the latest it may slide to (ns since
    /// 1970; 0: never). A deadline at or before 1970 is already past.
    @inlinable @inline(__always)
    func storedExpiry(_ deadline: CacheInstant?) -> (expiresAt: Int64, expiresAtMost: Int64) {
        let limit = deadline.map { max($0.nanosecondsSince1970, 1) } ?? 0
        guard slidingNanoseconds != 0 else { return (limit, 0) }
        return (Self.slid(from: clock.now().nanosecondsSince1970, by: slidingNanoseconds, limit: limit), limit)
    }

    /// The deadline of node `i`, which has one (`expiresAt`, not 0), after a
    /// hit now: slid forward with sliding expiry; -1 if it has passed. (Not
    /// inlined: a hit on an entry with no deadline stays as short as it was.)
    @inlinable @inline(never)
    func slidExpiry(of i: Int32, expiresAt: Int64, in state: inout LRUShardState<Key, Value>) -> Int64 {
        let now = clock.now().nanosecondsSince1970
        guard now < expiresAt else { return -1 }
        guard slidingNanoseconds != 0 else { return expiresAt }
        let slid = Self.slid(from: now, by: slidingNanoseconds, limit: state.nodes[Int(i)].expiresAtMost)
        state.nodes[Int(i)].expiresAt = slid
        return slid
    }

    /// `now + sliding`, no later than `limit` (0: no limit), saturating.
    @inlinable @inline(__always)
    static func slid(from now: Int64, by sliding: Int64, limit: Int64) -> Int64 {
        let (sum, overflow) = now.addingReportingOverflow(sliding)
        let slid = overflow ? .max : sum
        return limit == 0 ? slid : min(slid, limit)
    }
}
