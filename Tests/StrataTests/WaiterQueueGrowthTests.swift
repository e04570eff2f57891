@testable import Strata
import Synchronization
import Testing

/// A waiter resumed by id (`take`, as PooledCache, BackfillTracker and
/// RequestTrace resume theirs) or cancelled must leave nothing behind in the
/// queue, including its arrival-order record: a pooled get parks every caller,
/// so anything left per waiter grows with every get for the life of the process.
@Suite struct WaiterQueueGrowthTests {
    final class Host: Sendable {
        let state = Mutex(WaiterQueue<Int>())
        let parkedIDs = Mutex<[UInt64]>([])

        func wait() async throws -> Int {
            try await suspendAsWaiter(
                reserve: { state.withLock { $0.reserve() } },
                arrive: { id, continuation in
                    let parked = state.withLock { $0.park(id, continuation) }
                    if parked { parkedIDs.withLock { $0.append(id) } }
                    return parked ? .parked : .resume(continuation, .failure(CancellationError()))
                },
                cancel: { [self] id in state.withLock { $0.cancel(id) } }
            )
        }

        /// Resumes the waiter with id `id` by id, as a flight's completion does.
        func take(_ id: UInt64, value: Int) {
            state.withLock { $0.take(id) }?.resume(returning: value)
        }

        /// Ids still recorded in the queue's arrival order (parked or not).
        var recordedOrder: Int {
            let queue = state.withLock { $0 }
            guard let order = Mirror(reflecting: queue).children.first(where: { $0.label == "order" }) else { return -1 }
            return Mirror(reflecting: order.value).children.count
        }
        var parked: Int { state.withLock { $0.parkedCount } }
    }

    /// Parks one waiter and waits until it is parked; returns its task and id.
    func parkOne(_ host: Host, expecting count: Int) async -> (Task<Int, any Error>, UInt64) {
        let task = Task { try await host.wait() }
        _ = await poll { host.parked == count }
        return (task, host.parkedIDs.withLock { $0.last! })
    }

    @Test func waitersTakenByIdLeaveNoOrderBehind() async throws {
        let host = Host()
        for i in 0..<500 {
            let (task, id) = await parkOne(host, expecting: 1)
            host.take(id, value: i)
            #expect(try await task.value == i)
        }
        #expect(host.parked == 0)
        #expect(host.recordedOrder >= 0)
        #expect(host.recordedOrder < 100, "arrival order holds \(host.recordedOrder) ids for 0 parked waiters")
    }

    @Test func cancelledWaitersBehindALongWaiterLeaveNoOrderBehind() async throws {
        let host = Host()
        let (long, longID) = await parkOne(host, expecting: 1)
        for _ in 0..<500 {
            let (task, _) = await parkOne(host, expecting: 2)
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
        #expect(host.parked == 1)
        #expect(host.recordedOrder < 100, "arrival order holds \(host.recordedOrder) ids for 1 parked waiter")
        host.take(longID, value: 1)
        #expect(try await long.value == 1)
    }
}

/// `waitForPendingWrites()` cancelled while a back-fill hangs (a slow level
/// below, a caller with a timeout that retries) must leave nothing behind
/// per call: each left its threshold until the back-fill finished.
@Suite struct BackfillTrackerGrowthTests {
    @Test func cancelledWaitsForAHungBackfillLeaveNoThresholdsBehind() async throws {
        let tracker = BackfillTracker()
        let gate = Gate()
        tracker.start(level: "slow", key: "k") {
            try await gate.wait()
            return true
        }
        for _ in 0..<300 {
            let waiter = Task { await tracker.waitUntilIdle() }
            _ = await poll { tracker.state.withLock { $0.waiters.parkedCount } == 1 }
            waiter.cancel()
            await waiter.value
        }
        let thresholds = tracker.state.withLock { $0.thresholds.count }
        #expect(thresholds < 50, "\(thresholds) thresholds kept for 0 parked waiters")
        // A wait that stays still returns once the back-fill finishes.
        let last = Task { await tracker.waitUntilIdle() }
        _ = await poll { tracker.state.withLock { $0.waiters.parkedCount } == 1 }
        gate.open()
        await last.value
        #expect(tracker.counts.pending == 0)
    }
}
