import Dispatch
import Strata
import Synchronization
import Testing

/// A serial executor that counts the jobs enqueued on it: every executor hop
/// back to an actor using it is one job.
final class CountingExecutor: SerialExecutor {
    let queue = DispatchQueue(label: "strata.test.counting-executor")
    let jobs = Atomic<Int>(0)

    func enqueue(_ job: consuming ExecutorJob) {
        jobs.add(1, ordering: .relaxed)
        let unowned = UnownedJob(job)
        queue.async { unowned.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }
}

actor Caller {
    let executor = CountingExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    func getMany<L: CacheLevel>(_ cache: L, keys: [L.Key]) async throws -> Int {
        let before = executor.jobs.load(ordering: .relaxed)
        for key in keys { _ = try await cache.get(key) }
        return executor.jobs.load(ordering: .relaxed) - before
    }
}

@Suite struct ExecutorTests {
    /// A level that deliberately leaves the caller's executor (the control).
    struct ConcurrentOrigin: Fetcher {
        @concurrent func getIfPresent(_ key: String) async throws -> String? { "v:\(key)" }
    }

    @Test func levelOperationsRunOnTheCallersExecutorWithoutHops() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let cache = memory.instrumented(name: "L1")
            + BasicFetcher<String, String> { "v:\($0)" }
                .conditioned { _ in true }
                .postProcess { $0 }
                .transformKeys(OneWayTransformationBox<String, String> { $0 })
                .instrumented(name: "origin")
        let caller = Caller()
        let keys = (0..<200).map { "k\($0 % 20)" }
        let hops = try await caller.getMany(cache, keys: keys)
        #expect(hops == 0, "\(hops) executor hops for 200 gets through five wrappers")

        // Control: the same walk through a @concurrent level hops back every time.
        let control = try await caller.getMany(MemoryCacheLevel<String, String>(capacity: 10) + ConcurrentOrigin(),
                                               keys: (0..<50).map { "c\($0)" })
        #expect(control >= 50)
    }
}

@Suite struct ConcurrentLevelTests {
    @Test func concurrentRunsABlockingFetcherOffTheCallersExecutor() async throws {
        let caller = Caller()
        let origin = BasicFetcher<String, String> { "v:\($0)" }
        let keys = (0..<50).map { "c\($0)" }
        // Without it, the closure runs on the caller's executor through every wrapper...
        #expect(try await caller.getMany(origin.capRequests(2).conditioned { _ in true }.normalize(), keys: keys) == 0)
        // ...with it, each call leaves the caller's executor (and comes back once).
        #expect(try await caller.getMany(origin.concurrent(), keys: keys) >= keys.count)
    }
}
