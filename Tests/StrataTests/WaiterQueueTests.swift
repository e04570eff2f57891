@testable import Strata
import Synchronization
import Testing

@Suite struct WaiterQueueTests {
    /// Parks `count` waiters in a queue behind a mutex and returns their ids in order.
    final class Host: Sendable {
        let state = Mutex(WaiterQueue<Int>())
        func wait() async throws -> Int {
            try await suspendAsWaiter(
                reserve: { state.withLock { $0.reserve() } },
                arrive: { id, continuation in
                    state.withLock { $0.park(id, continuation) } ? .parked : .resume(continuation, .failure(CancellationError()))
                },
                cancel: { [self] id in state.withLock { $0.cancel(id) } }
            )
        }
        var parked: Int { state.withLock { $0.parkedCount } }
        var tracked: Int { state.withLock { $0.trackedCount } }
        func resumeFirst(with value: Int) -> Bool {
            guard let waiter = state.withLock({ $0.resumeFirst() }) else { return false }
            waiter.resume(returning: value)
            return true
        }
    }

    @Test func waitersAreResumedInArrivalOrder() async throws {
        let host = Host()
        var tasks: [Task<Int, any Error>] = []
        for i in 0..<5 {
            tasks.append(Task { try await host.wait() })
            #expect(await poll { host.parked == i + 1 })
        }
        for i in 0..<5 { #expect(host.resumeFirst(with: i)) }
        for (i, task) in tasks.enumerated() { #expect(try await task.value == i) }
        #expect(host.tracked == 0)
    }

    @Test func cancelBeforeParkIsReportedAtThePark() {
        var queue = WaiterQueue<Int>()
        let id = queue.reserve()
        #expect(queue.cancel(id) == nil)
        #expect(queue.trackedCount == 1)
        #expect(queue.admit(id) == false)
        #expect(queue.trackedCount == 0)
    }

    @Test func cancelAfterResumeLeavesNothingBehind() async throws {
        // The leak the old hand-written registries had: a waiter resumed, then
        // cancelled before its await returned, left its id behind forever.
        var queue = WaiterQueue<Int>()
        let id = queue.reserve()
        #expect(queue.trackedCount == 1)
        _ = queue.admit(id)  // resumed without parking
        #expect(queue.cancel(id) == nil)
        #expect(queue.trackedCount == 0)
    }

    @Test func cancelledParkedWaiterLeavesWithCancellationAndTheRestStay() async throws {
        let host = Host()
        let doomed = Task { try await host.wait() }
        #expect(await poll { host.parked == 1 })
        let kept = Task { try await host.wait() }
        #expect(await poll { host.parked == 2 })
        doomed.cancel()
        await #expect(throws: CancellationError.self) { try await doomed.value }
        #expect(host.parked == 1)
        #expect(host.resumeFirst(with: 7))
        #expect(try await kept.value == 7)
        #expect(host.tracked == 0)
    }

    @Test func semaphoreUnderRandomCancellationTracksNoWaiterAfterwards() async throws {
        let semaphore = AsyncSemaphore(limit: 2)
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<400 {
                group.addTask {
                    let task = Task { try await semaphore.withPermit { await Task.yield() } }
                    if i % 3 == 0 { task.cancel() }
                    _ = try? await task.value
                }
            }
        }
        #expect(semaphore.available == 2)
        #expect(semaphore.waiting == 0)
        #expect(semaphore.trackedWaiters == 0)
    }

    @Test func pooledUnderRandomCancellationTracksNoWaiterAfterwards() async throws {
        let origin = BasicFetcher<String, String> { key in
            await Task.yield()
            return key
        }.pooled()
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<400 {
                group.addTask {
                    let task = Task { try await origin.getIfPresent("k\(i % 7)") }
                    if i % 3 == 0 { task.cancel() }
                    _ = try? await task.value
                }
            }
        }
        #expect(origin.inFlightCount == 0)
        #expect(origin.trackedWaiters == 0)
    }
}

/// Every wrapper forwards waitForPendingWrites to what it wraps.
@Suite struct WrapperForwardingTests {
    final class Probe: CacheLevel, Sendable {
        let waits = Atomic<Int>(0)
        func getIfPresent(_ key: String) async throws -> String? { key }
        func set(_ value: String, forKey key: String) async throws {}
        func remove(_ key: String) async throws {}
        func clear() async {}
        func onMemoryWarning() async {}
        func waitForPendingWrites() async { waits.add(1, ordering: .relaxed) }
    }

    @Test func everyWrapperForwardsWaitForPendingWrites() async throws {
        let probe = Probe()
        let wrapped: [any CacheLevel] = [
            probe.conditioned { _ in true },
            probe.skipWhile { _ in false },
            probe.transformKeys(OneWayTransformationBox<Int, String> { "\($0)" }),
            probe.mapKeys { (key: Int) in "\(key)" },
            probe.postProcess { $0 },
            probe.mapValues({ $0 }, inverse: { $0 }),
            probe.capRequests(2),
            probe.pooled(),
            probe.instrumented(name: "p"),
            probe.expires(at: .seconds(1)),
            probe.allBatch(),
            probe.normalize(),
            switchLevels(cacheA: probe, cacheB: MemoryCacheLevel<String, String>(capacity: 1)) { _ in .cacheA },
            probe + MemoryCacheLevel<String, String>(capacity: 1),
        ]
        for (i, level) in wrapped.enumerated() {
            await level.waitForPendingWrites()
            #expect(probe.waits.load(ordering: .relaxed) == i + 1, "\(type(of: level)) did not forward")
        }
    }
}
