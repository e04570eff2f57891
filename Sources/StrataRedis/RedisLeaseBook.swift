import Strata
import Synchronization

/// What closes the cache-aside race with writers that are not Strata, when a
/// ``RedisCacheLevel`` is created with `leases: true` (memcache's leases).
///
/// The race: a read misses in Redis and reads the origin's old value; the
/// origin changes, and its writer deletes the key in Redis (`DEL`), which was
/// absent, so Redis changes nothing and reports nothing; the read's back-fill
/// then stores the old value, for good. No check at back-fill time can see a
/// `DEL` of an absent key. So on a miss the level leaves a **lease** in the
/// key (`SET NX PX`, a value no codec produces: ``marker`` and a random
/// token) before the get returns, that is before the origin is read; the
/// writer's `DEL` then deletes the lease, and the back-fill stores its value
/// only if the key still holds the lease its read saw (a script). A lease
/// reads as a miss everywhere in the level, and lasts ``lifetime``.
///
/// Which lease a back-fill may use: the latest recorded for its key before
/// its read began (``Backfill/readStartedAt``: a composition starts
/// that clock once its upper level missed, so after the Redis read). Each
/// miss and each failed read of the key records one before the get returns:
/// the lease it placed or saw, or "none" when it could place none (then the
/// back-fill is declined, as it is with no record at all). The lease chosen
/// was in the key before the back-fill's origin read began, which is all
/// that matters: a change of the origin after that is followed by the
/// writer's `DEL`, which ends the lease (and a `DEL` that comes after the
/// back-fill deletes what it stored).
final class RedisLeaseBook: Sendable {
    /// The first bytes of every lease (a NUL first: no text, JSON or
    /// property-list value starts so).
    static let marker: [UInt8] = Array("\u{0}strata-lease:".utf8)

    /// How long a lease stays in Redis: a back-fill of a read that began
    /// longer ago finds it gone and is declined.
    static var lifetime: Duration { .seconds(60) }

    /// Records kept at most; past this the oldest half goes (their
    /// back-fills are declined).
    static var recordLimit: Int { 8192 }

    private struct Record {
        /// The lease placed or seen; `nil`: the read could place none.
        let token: [UInt8]?
        let at: ContinuousClock.Instant
    }

    private struct State {
        var records: [[UInt8]: [Record]] = [:]
        var count = 0
        var unrecordedReads = 0
    }

    private let state = Mutex(State())

    /// A fresh lease value.
    static func newLease() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        return marker + (0..<32).map { _ in digits[Int(generator.next() % 16)] }
    }

    /// Whether a value read from Redis is a lease.
    static func isLease(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count > marker.count && bytes.starts(with: marker)
    }

    /// Notes what a read of the Redis key `name` left for its back-fill: the
    /// lease in the key, or `nil` when there is none to rely on.
    func record(_ name: [UInt8], lease: [UInt8]?) {
        let now = ContinuousClock.now
        state.withLock { state in
            if state.count >= Self.recordLimit { Self.prune(&state, keepingAfter: now - CacheContext.backfillAgeLimit) }
            if state.count >= Self.recordLimit { Self.dropOldestHalf(&state) }
            if state.count >= Self.recordLimit { state.records = [:]; state.count = 0 }  // all at one instant: start over
            state.records[name, default: []].append(Record(token: lease, at: now))
            state.count += 1
        }
    }

    /// The lease a back-fill of `name` whose read began at `readStart` must
    /// find in the key; `nil`: it must be declined.
    func lease(for name: [UInt8], readStart: ContinuousClock.Instant) -> [UInt8]? {
        state.withLock { state in
            guard let record = state.records[name]?.last(where: { $0.at <= readStart }) else {
                state.unrecordedReads += 1
                return nil
            }
            return record.token
        }
    }

    /// Back-fills that found no record made before their read began (a
    /// record pruned for its age, or a read this level never saw).
    var unrecordedReads: Int { state.withLock { $0.unrecordedReads } }

    private static func prune(_ state: inout State, keepingAfter limit: ContinuousClock.Instant) {
        var count = 0
        state.records = state.records.compactMapValues { records in
            let kept = records.filter { $0.at >= limit }
            count += kept.count
            return kept.isEmpty ? nil : kept
        }
        state.count = count
    }

    private static func dropOldestHalf(_ state: inout State) {
        let times = state.records.values.flatMap { $0.map(\.at) }.sorted()
        prune(&state, keepingAfter: times[times.count / 2])
    }
}
