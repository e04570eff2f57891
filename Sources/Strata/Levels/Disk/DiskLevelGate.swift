import Synchronization

/// Lets a disk level's operations in until the level is shut down, and lets
/// the shutdown wait for those already in.
///
/// One atomic word: bit 0 is "shut", the rest counts the operations in
/// progress (in steps of 2), so letting one in and out costs two atomic adds.
/// Once shut, the count only rises for an instant (an operation that is
/// turned away takes its step back at once), so the word reads exactly 1
/// when no admitted operation is left, and stays so.
final class DiskLevelGate: Sendable {
    private let word = Atomic<Int>(0)
    /// Shutdowns waiting for the operations in progress (not cancellable:
    /// a shutdown returns only once the level is retired).
    private let waiters = Mutex(WaiterQueue<Void>())

    /// Lets an operation in (`true`: call ``leave()`` when it is done), or
    /// turns it away once the gate is shut (`false`).
    @inline(__always)
    func enter() -> Bool {
        if word.wrappingAdd(2, ordering: .acquiringAndReleasing).newValue & 1 == 0 { return true }
        leave()
        return false
    }

    /// An operation that ``enter()`` let in is done.
    @inline(__always)
    func leave() {
        if word.wrappingSubtract(2, ordering: .acquiringAndReleasing).newValue == 1 { wakeWaiters() }
    }

    var isShut: Bool { word.load(ordering: .acquiring) & 1 != 0 }

    /// Turns every later operation away; `true` for the call that shut it.
    func shut() -> Bool {
        word.bitwiseOr(1, ordering: .acquiringAndReleasing).oldValue & 1 == 0
    }

    /// Returns once no operation let in before ``shut()`` is in progress.
    func drained() async {
        if word.load(ordering: .acquiring) == 1 { return }
        // Never cancelled (nothing calls `cancel`), so it never throws.
        try? await withCheckedThrowingContinuation { (continuation: WaiterQueue<Void>.Continuation) in
            // Checked again under the lock the last `leave()` takes to wake
            // the waiters: either it finds this one, or this check sees it left.
            let done = waiters.withLock { waiters -> Bool in
                if word.load(ordering: .acquiring) == 1 { return true }
                _ = waiters.park(waiters.reserve(), continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func wakeWaiters() {
        for waiter in waiters.withLock({ $0.resumeAll() }) { waiter.resume() }
    }
}
