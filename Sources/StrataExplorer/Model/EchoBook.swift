import Synchronization

/// Tells Redis's report of a key this explorer back-filled (an echo: a
/// back-fill is a script, which `NOLOOP` does not cover) from another
/// client's change, for the event log.
///
/// It decides by events, not by a delay. A get of a Redis level that misses
/// is seen (the level's observers run on the requesting task) before the
/// back-fill that may follow can be sent, so a report of a key with no miss
/// in the last ``window`` is another client's at once. A report of a key
/// that did miss is an echo if that back-fill has been seen storing, and
/// each stored back-fill accounts for one report; if it has not been seen
/// yet (its task and the report's run apart: under load the report came
/// first by tens of milliseconds), the report waits for it, at most
/// ``wait``. Redis reports changes in order, so another client's write that
/// follows an echo is its own report and finds the back-fill accounted for.
final class EchoBook: Sendable {
    /// How long after a miss (or a back-fill) a report of the key may be its echo.
    static var window: Duration { .seconds(1) }
    /// How long a report of a key that just missed waits for the back-fill.
    static var wait: Duration { .seconds(2) }

    private struct State {
        var missed: [String: ContinuousClock.Instant] = [:]
        /// Stored back-fills not yet matched with their report.
        var backfilled: [String: (at: ContinuousClock.Instant, count: Int)] = [:]

        mutating func prune(_ now: ContinuousClock.Instant) {
            if missed.count > 4096 { missed = missed.filter { now - $0.value < EchoBook.window } }
            if backfilled.count > 4096 { backfilled = backfilled.filter { now - $0.value.at < EchoBook.window } }
        }
    }

    private let state = Mutex(State())

    /// A get of the Redis level missed `key`: a back-fill may follow.
    func noteMiss(_ key: String) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.missed[key] = now
            state.prune(now)
        }
    }

    /// A back-fill stored `key` in the Redis level: Redis will report it back.
    func noteBackfill(_ key: String) {
        let now = ContinuousClock.now
        state.withLock { state in
            let count = state.backfilled[key].map { now - $0.at < Self.window ? $0.count : 0 } ?? 0
            state.backfilled[key] = (now, count + 1)
            state.prune(now)
        }
    }

    /// Whether Redis's report of `key` is the echo of this explorer's back-fill.
    func isEcho(_ key: String) async -> Bool {
        enum Look { case echo, other, waitForBackfill }
        let deadline = ContinuousClock.now + Self.wait
        while true {
            let look = state.withLock { state -> Look in
                let now = ContinuousClock.now
                if let backfill = state.backfilled[key], now - backfill.at < Self.window {
                    state.backfilled[key] = backfill.count > 1 ? (backfill.at, backfill.count - 1) : nil
                    return .echo
                }
                guard let missed = state.missed[key], now - missed < Self.window + Self.wait else { return .other }
                return .waitForBackfill
            }
            switch look {
            case .echo: return true
            case .other: return false
            case .waitForBackfill:
                // A poll with a deadline, only for a key this explorer has
                // just missed on (rare: its back-fill is usually seen first).
                guard ContinuousClock.now < deadline else { return false }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
    }
}
