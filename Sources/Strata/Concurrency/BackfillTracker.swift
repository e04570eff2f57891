import DequeModule
import Logging
import Synchronization

/// Tracks the back-fill writes a composed cache has started and not finished,
/// so callers (tests, shutdown code) can await them without sleeping.
///
/// ``waitUntilIdle()`` waits for the back-fills started *before* it was called,
/// not for the level to go quiet, so it returns under a steady load too.
@usableFromInline
final class BackfillTracker: Sendable {
    struct State {
        /// Sequence numbers of unfinished back-fills, in start order (finished
        /// ones leave the front; those finished out of order wait in `finishedEarly`).
        var unfinished: Deque<UInt64> = []
        var finishedEarly: Set<UInt64> = []
        var nextSequence: UInt64 = 0
        var failed = 0
        var skipped = 0
        /// Parked waiters with the last sequence number each waits for, in call order.
        var thresholds: Deque<(id: UInt64, through: UInt64)> = []
        var waiters = WaiterQueue<Void>()

        /// Every back-fill with a smaller sequence number has finished.
        var lowWater: UInt64 { unfinished.first ?? nextSequence }

        /// Forgets the thresholds of cancelled waiters once they outnumber
        /// the parked ones (amortised O(1) per waiter): while a back-fill
        /// hangs, a caller that keeps giving up on `waitUntilIdle()` and
        /// trying again must not leave a threshold behind each time.
        mutating func dropCancelledThresholds() {
            guard thresholds.count > 2 * waiters.parkedCount + 16 else { return }
            let waiters = waiters
            thresholds = Deque(thresholds.filter { waiters.isParked($0.id) })
        }
    }

    let state = Mutex(State())
    static let logger = Logger(label: "strata.backfill")
    /// "back-fill failed": the first at once, then once per 10 s with a count
    /// (an outage below fails every back-fill).
    let failureWarning: RateLimitedWarning
    /// Back-fills in flight at most; past it a back-fill is dropped and
    /// counted as skipped (a back-fill only saves a later read, so dropping
    /// one never changes an answer), so a burst of misses cannot pile up tasks.
    let limit: Int

    /// `failure` is the warning logged when a write fails (see ``failureWarning``).
    @usableFromInline init(limit: Int = 1024, failure: Logger.Message = "back-fill failed") {
        self.limit = limit
        self.failureWarning = RateLimitedWarning(BackfillTracker.logger, failure)
    }

    /// Starts `write` in its own task; the caller does not wait for it. The
    /// write returns `false` (or throws ``BackfillDeclined``) when it was
    /// skipped (a newer write to the key won); its failure is logged and
    /// counted, never thrown to the caller. Returns whether it started
    /// (`false`: dropped at the limit).
    @usableFromInline @discardableResult
    func start(level: String, key: some Sendable, _ write: @escaping @Sendable () async throws -> Bool) -> Bool {
        let sequence = state.withLock { state -> UInt64? in
            guard state.unfinished.count - state.finishedEarly.count < limit else {
                state.skipped += 1
                return nil
            }
            let sequence = state.nextSequence
            state.nextSequence += 1
            state.unfinished.append(sequence)
            return sequence
        }
        guard let sequence else { return false }
        Task {
            do {
                let landed = try await write()
                self.finish(sequence, failed: false, skipped: !landed)
            } catch is BackfillDeclined {
                self.finish(sequence, failed: false, skipped: true)  // a level below holds a newer value
            } catch {
                self.failureWarning.warn(["level": "\(level)", "key": "\(describeKey(key))", "error": "\(error)"])
                self.finish(sequence, failed: true, skipped: false)
            }
        }
        return true
    }

    private func finish(_ sequence: UInt64, failed: Bool, skipped: Bool) {
        let ready = state.withLock { state -> [WaiterQueue<Void>.Continuation] in
            if failed { state.failed += 1 }
            if skipped { state.skipped += 1 }
            if state.unfinished.first == sequence {
                state.unfinished.removeFirst()
                while let first = state.unfinished.first, state.finishedEarly.remove(first) != nil {
                    state.unfinished.removeFirst()
                }
            } else {
                state.finishedEarly.insert(sequence)
            }
            var ready: [WaiterQueue<Void>.Continuation] = []
            while let first = state.thresholds.first, first.through < state.lowWater {
                state.thresholds.removeFirst()
                if let waiter = state.waiters.take(first.id) { ready.append(waiter) }
            }
            return ready
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns when every back-fill started before this call has finished (or
    /// when the task is cancelled).
    func waitUntilIdle() async {
        try? await suspendAsWaiter(
            reserve: { state.withLock { $0.waiters.reserve() } },
            arrive: { id, continuation in
                state.withLock { state -> WaiterArrival<Void> in
                    guard state.lowWater < state.nextSequence else {
                        return .resume(continuation, state.waiters.admit(id) ? .success(()) : .failure(CancellationError()))
                    }
                    guard state.waiters.park(id, continuation) else {
                        return .resume(continuation, .failure(CancellationError()))
                    }
                    state.thresholds.append((id, state.nextSequence - 1))
                    return .parked
                }
            },
            cancel: { [self] id in
                state.withLock { state in
                    let continuation = state.waiters.cancel(id)
                    state.dropCancelledThresholds()
                    return continuation
                }
            }
        )
    }

    /// `started` counts back-fills that got a task (dropped ones are `skipped`).
    var counts: (started: Int, failed: Int, skipped: Int, pending: Int) {
        state.withLock { state in
            (Int(state.nextSequence), state.failed, state.skipped, state.unfinished.count - state.finishedEarly.count)
        }
    }
}
