import Logging
import Synchronization

/// Counts the back-fill writes a composed cache has started and not finished,
/// so callers (tests, shutdown code) can await them without sleeping.
@usableFromInline
final class BackfillTracker: Sendable {
    struct State {
        var pending = 0
        var started = 0
        var failed = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    let state = Mutex(State())
    static let logger = Logger(label: "strata.backfill")

    @usableFromInline init() {}

    /// Starts `write` in its own task; the caller does not wait for it and its
    /// failure is logged and counted, never thrown to the caller.
    @usableFromInline
    func start(level: String, key: some Sendable, _ write: @escaping @Sendable () async throws -> Void) {
        state.withLock { $0.pending += 1; $0.started += 1 }
        Task {
            do {
                try await CacheContext.$isBackfill.withValue(true) { try await write() }
                self.finish(failed: false)
            } catch {
                Self.logger.warning("back-fill failed", metadata: [
                    "level": "\(level)", "key": "\(describeKey(key))", "error": "\(error)",
                ])
                self.finish(failed: true)
            }
        }
    }

    private func finish(failed: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.pending -= 1
            if failed { state.failed += 1 }
            guard state.pending == 0 else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                if state.pending == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    var counts: (started: Int, failed: Int, pending: Int) {
        state.withLock { ($0.started, $0.failed, $0.pending) }
    }
}
