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

    private struct State {
        /// Per name, the bytes of each back-fill sent and not yet reported.
        var written: [[UInt8]: [[UInt8]]] = [:]
        /// Names in the order first recorded; taken ones are skipped (and
        /// dropped in bulk once they are most of it).
        var order = Deque<[UInt8]>()

        mutating func forget(_ name: [UInt8]) -> [[UInt8]]? {
            guard let values = written.removeValue(forKey: name) else { return nil }
            if order.count > 2 * written.count + 64 { order = Deque(order.filter { written[$0] != nil }) }
            return values
        }
    }

    private let state = Mutex(State())

    /// Before sending a script that writes `value` to `name`.
    func expect(_ name: [UInt8], _ value: [UInt8]) {
        state.withLock { state in
            if state.written[name, default: []].count == 0 { state.order.append(name) }
            state.written[name, default: []].append(value)
            while state.written.count > Self.limit, let oldest = state.order.popFirst() { state.written[oldest] = nil }
        }
    }

    /// The script that was to write `value` wrote nothing (declined), or
    /// its write was taken back: one record of it goes.
    func cancel(_ name: [UInt8], _ value: [UInt8]) {
        state.withLock { state in
            guard var values = state.written[name], let index = values.firstIndex(of: value) else { return }
            values.remove(at: index)
            if values.isEmpty { _ = state.forget(name) } else { state.written[name] = values }
        }
    }

    /// The bytes back-fills wrote to `name`, if any is awaiting its report
    /// (a report may cover several writes: all are taken).
    func take(_ name: [UInt8]) -> [[UInt8]]? {
        state.withLock { $0.forget(name) }
    }
}
