import Synchronization

/// Tells Redis's report of a key this explorer back-filled (an echo: a
/// back-fill is a script, which `NOLOOP` does not cover) from another
/// client's change, for the event log.
///
/// It decides by events, not by a delay. A get of a Redis level that misses
/// (or fails: the level below answers, and back-fills) is seen (the level's
/// observers run on the requesting task) before the back-fill that may
/// follow can be sent, so a report of a key with no such get in the last
/// ``window`` + ``wait`` is another client's at once. A report of a key that
/// did miss is an echo if that back-fill has been seen storing, and each
/// stored back-fill accounts for one report; if it has not been seen yet
/// (its task and the report's run apart: under load the report came first
/// by tens of milliseconds), the report waits for it, at most ``wait``.
///
/// Reports of one key are judged in the order Redis sent them
/// (``judge(_:_:)``): Redis reports changes in order, so another client's
/// write that follows an echo is its own report and must not take the
/// back-fill's credit from the echo still waiting for it. A key waiting
/// holds back only the later reports of that key.
final class EchoBook: Sendable {
    /// How long after a back-fill its report may come.
    let window: Duration
    /// How long a report of a key that just missed waits for the back-fill.
    let wait: Duration

    init(window: Duration = .seconds(1), wait: Duration = .seconds(2)) {
        self.window = window
        self.wait = wait
    }

    enum Look { case echo, other, waitForBackfill }

    private struct State {
        var missed: [String: ContinuousClock.Instant] = [:]
        /// Stored back-fills not yet matched with their report.
        var backfilled: [String: (at: ContinuousClock.Instant, count: Int)] = [:]
        /// Per key, the reports judged one after another by a task of their
        /// own (the first is being judged), because one of them waits for
        /// a back-fill.
        var queued: [String: [@Sendable (Bool) -> Void]] = [:]

        mutating func prune(_ now: ContinuousClock.Instant, window: Duration, wait: Duration) {
            if missed.count > 4096 { missed = missed.filter { now - $0.value < window + wait } }
            if backfilled.count > 4096 { backfilled = backfilled.filter { now - $0.value.at < window } }
        }

        /// Judges a report of `key` now if it can be (taking a back-fill's credit).
        mutating func look(_ key: String, _ now: ContinuousClock.Instant, window: Duration, wait: Duration) -> Look {
            if let backfill = backfilled[key], now - backfill.at < window {
                backfilled[key] = backfill.count > 1 ? (backfill.at, backfill.count - 1) : nil
                return .echo
            }
            guard let missed = missed[key], now - missed < window + wait else { return .other }
            return .waitForBackfill
        }
    }

    private let state = Mutex(State())

    /// A get of the Redis level missed `key` (or failed): a back-fill may follow.
    func noteMiss(_ key: String) {
        let now = ContinuousClock.now
        state.withLock { state in
            state.missed[key] = now
            state.prune(now, window: window, wait: wait)
        }
    }

    /// A back-fill stored `key` in the Redis level: Redis will report it back.
    func noteBackfill(_ key: String) {
        let now = ContinuousClock.now
        state.withLock { state in
            let count = state.backfilled[key].map { now - $0.at < window ? $0.count : 0 } ?? 0
            state.backfilled[key] = (now, count + 1)
            state.prune(now, window: window, wait: wait)
        }
    }

    /// Judges Redis's report of `key` after every earlier report of it, and
    /// calls `verdict` with whether it is the echo of this explorer's
    /// back-fill: at once (on the caller) unless it, or an earlier report of
    /// the key, waits for a back-fill. Call it in the order Redis reported.
    func judge(_ key: String, _ verdict: @escaping @Sendable (Bool) -> Void) {
        enum Step { case now(Bool), queued, startQueue }
        let step = state.withLock { state -> Step in
            if state.queued[key] != nil {
                state.queued[key]!.append(verdict)
                return .queued
            }
            switch state.look(key, .now, window: window, wait: wait) {
            case .echo: return .now(true)
            case .other: return .now(false)
            case .waitForBackfill:
                state.queued[key] = [verdict]
                return .startQueue
            }
        }
        switch step {
        case .now(let echo): verdict(echo)
        case .queued: break
        case .startQueue: Task { await self.drainQueue(of: key) }
        }
    }

    /// Judges the queued reports of `key` in order, until none is left.
    private func drainQueue(of key: String) async {
        while true {
            let echo = await isEcho(key)
            let (first, more) = state.withLock { state -> ((@Sendable (Bool) -> Void)?, Bool) in
                guard var queue = state.queued[key], !queue.isEmpty else { return (nil, false) }
                let first = queue.removeFirst()
                state.queued[key] = queue.isEmpty ? nil : queue
                return (first, !queue.isEmpty)
            }
            first?(echo)
            guard more else { return }
        }
    }

    /// Whether Redis's report of `key` is the echo of this explorer's
    /// back-fill, waiting for a back-fill at most ``wait``. (Reports of a
    /// key judged concurrently may take each other's credit: the log uses
    /// ``judge(_:_:)``.)
    func isEcho(_ key: String) async -> Bool {
        let deadline = ContinuousClock.now + wait
        while true {
            switch state.withLock({ $0.look(key, .now, window: window, wait: wait) }) {
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
