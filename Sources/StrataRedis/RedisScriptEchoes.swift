import DequeModule
import Synchronization

/// The keys this level's back-fill scripts wrote, with the bytes written,
/// until Redis reports the write back.
///
/// Writes go out on the tracking connection, whose `NOLOOP` keeps Redis from
/// reporting them back; but Redis 7.0 counts a script's writes as the
/// script's, not the connection's, so a back-fill (a script: tombstones,
/// `SET NX`, leases) is reported back as if another client had written the
/// key, and the levels above would drop what they were just given. A report
/// of a key recorded here is checked instead: if the key still holds the
/// bytes the back-fill wrote, nothing the levels above hold is out of date
/// (any other write since left other bytes, or the same value); otherwise,
/// or if the check fails, it is reported as usual. One `GET` per back-fill.
///
/// Bounded: past ``limit`` keys the oldest record is dropped, and its report
/// then goes out as usual (a spurious invalidation, never a missed one). A
/// record whose report never comes (a failed script, a lost connection)
/// only makes a later report of the key be checked the same way.
final class RedisScriptEchoes: Sendable {
    static var limit: Int { 4096 }

    /// A record older than this is no longer matched: Redis reports a write
    /// within milliseconds, so one this old lost its report (a dropped
    /// connection) and only a stale record could hide another client's write.
    static var lifetime: Duration { .seconds(5) }

    /// The bytes a script left in the key (`nil`: it deleted the key).
    private struct Record {
        let bytes: [UInt8]?
        let at: ContinuousClock.Instant
    }

    private struct State {
        /// Per name, the bytes of each back-fill sent and not yet reported.
        var written: [[UInt8]: [Record]] = [:]
        /// Names in the order first recorded; taken ones are skipped (and
        /// dropped in bulk once they are most of it).
        var order = Deque<[UInt8]>()

        mutating func forget(_ name: [UInt8]) -> [Record]? {
            guard let records = written.removeValue(forKey: name) else { return nil }
            if order.count > 2 * written.count + 64 { order = Deque(order.filter { written[$0] != nil }) }
            return records
        }
    }

    private let state = Mutex(State())

    /// Before sending a script that writes `value` to `name` (`nil`: deletes it).
    func expect(_ name: [UInt8], _ value: [UInt8]?) {
        let now = ContinuousClock.now
        state.withLock { state in
            if state.written[name, default: []].isEmpty { state.order.append(name) }
            state.written[name, default: []].append(Record(bytes: value, at: now))
            while state.written.count > Self.limit, let oldest = state.order.popFirst() { state.written[oldest] = nil }
        }
    }

    /// The script that was to write `value` wrote nothing (declined, failed),
    /// or its write was taken back: one record of it goes.
    func cancel(_ name: [UInt8], _ value: [UInt8]) {
        state.withLock { state in
            guard var records = state.written[name], let index = records.firstIndex(where: { $0.bytes == value }) else { return }
            records.remove(at: index)
            if records.isEmpty { _ = state.forget(name) } else { state.written[name] = records }
        }
    }

    /// The level wrote `name` itself since (a set or remove, not reported
    /// back): a back-fill's report still to come is a change like any other.
    func forget(_ name: [UInt8]) { state.withLock { _ = $0.forget(name) } }

    /// A clear of the level: as ``forget(_:)`` for every name.
    func forgetAll() { state.withLock { $0 = State() } }

    /// The bytes back-fills wrote to `name` in the last ``lifetime``, if any
    /// is awaiting its report (a report may cover several writes: all are taken).
    func take(_ name: [UInt8]) -> [[UInt8]?]? {
        let now = ContinuousClock.now
        let records = state.withLock { $0.forget(name) }?.filter { now - $0.at < Self.lifetime }
        guard let records, !records.isEmpty else { return nil }
        return records.map(\.bytes)
    }
}
