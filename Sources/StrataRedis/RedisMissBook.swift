import Strata
import Synchronization

/// What a read that missed in Redis leaves for the back-fill that follows
/// it: the server's time once the miss was known, and, with leases, the
/// lease in the key (``RedisLease``).
///
/// **The server's time** ends the cache-less window after a remove. A
/// remove or clear leaves a tombstone holding the server's time; a back-fill
/// is declined when a tombstone is at or after the time its read missed, as
/// the read's origin answer may then be what the remove meant to end. After
/// a miss the level asks Redis for `TIME` (in the round trip that places the
/// lease, with leases) before the get returns, that is before the origin is
/// read. A remove the server ran before that `TIME` ran before the origin
/// read began: the read saw the origin's new data, and its back-fill is
/// kept, however soon after the remove it comes. A remove after it declines
/// the back-fill. Both times are the server's, so no two clocks are compared
/// and no margin is needed. A back-fill with no record (a read that failed,
/// or a record pruned) is judged by its age instead, with a margin.
///
/// The same `TIME` gives the back-fill's expiry on the server's clock: the
/// script stores what is left of it when it runs, so a back-fill the server
/// runs late (stalled, or a slow network) does not outlive its deadline.
///
/// **Which record** a back-fill may use: the latest made for its key before
/// its read began (``Backfill/readStartedAt``: a composition starts that
/// clock once its upper level missed, so after this level's get returned).
/// A record made by another read of the key is as good, as long as it was
/// made before this read began: its time is then before this read's origin
/// read too. A later one is never used (it would let an overlapping remove
/// through).
final class RedisMissBook: Sendable {
    /// A `TIME` reply: the server's time (microseconds since 1970) once the
    /// miss was known, this machine's time when the reply came, and the
    /// client of the server that answered (on a cluster, one master's).
    struct ServerTime: Sendable {
        let server: Int64
        let local: CacheInstant
        let source: RedisClient?
    }

    /// One read's note.
    struct Record: Sendable {
        /// The lease placed or seen; `nil`: the read could place none.
        let lease: [UInt8]?
        /// The server's `TIME` once the miss was known; `nil`: not known.
        let serverTime: ServerTime?
        let at: ContinuousClock.Instant

        /// `deadline` (this machine's clock) on the server's clock, in
        /// microseconds, by the offset the record's `TIME` measured: never
        /// later than the true one (the reply came after the server read its
        /// clock), earlier by at most that round trip.
        func serverMicroseconds(of deadline: CacheInstant) -> Int64? {
            guard let serverTime else { return nil }
            let (since, overflow) = deadline.nanosecondsSince1970.subtractingReportingOverflow(serverTime.local.nanosecondsSince1970)
            guard !overflow else { return nil }
            let (result, overflow2) = serverTime.server.addingReportingOverflow(since / 1_000)
            return overflow2 ? nil : result
        }
    }

    /// Records kept at most; past this the oldest half goes (their
    /// back-fills are judged by their age, or declined with leases).
    static var recordLimit: Int { 8192 }

    private struct State {
        var records: [[UInt8]: [Record]] = [:]
        var count = 0
        var unrecordedReads = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Notes what a read of the Redis key `name` left for its back-fill.
    func record(_ name: [UInt8], lease: [UInt8]?, serverTime: ServerTime?) {
        let now = ContinuousClock.now
        state.withLock { state in
            if state.count >= Self.recordLimit { Self.prune(&state, keepingAfter: now - CacheContext.backfillAgeLimit) }
            if state.count >= Self.recordLimit { Self.dropOldestHalf(&state) }
            if state.count >= Self.recordLimit { state.records = [:]; state.count = 0 }  // all at one instant: start over
            state.records[name, default: []].append(Record(lease: lease, serverTime: serverTime, at: now))
            state.count += 1
        }
    }

    /// The record a back-fill of `name` whose read began at `readStart`
    /// relies on; `nil`: none was made before it.
    func record(for name: [UInt8], readStart: ContinuousClock.Instant) -> Record? {
        state.withLock { state in
            guard let record = state.records[name]?.last(where: { $0.at <= readStart }) else {
                state.unrecordedReads += 1
                return nil
            }
            return record
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
