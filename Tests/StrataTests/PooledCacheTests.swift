import Strata
import Synchronization
import Testing

@Suite struct PooledCacheTests {
    /// An origin that counts executions and blocks on a gate.
    final class Origin: Fetcher {
        let executions = Atomic<Int>(0)
        let cancellations = Atomic<Int>(0)
        let gate: Gate
        init(gate: Gate) { self.gate = gate }
        func getIfPresent(_ key: String) async throws -> String? {
            executions.add(1, ordering: .relaxed)
            do { try await gate.wait() } catch {
                cancellations.add(1, ordering: .relaxed)
                throw error
            }
            if key == "missing" { return nil }
            if key == "broken" { throw TestError("origin 500") }
            return "value:\(key)"
        }
    }

    @Test func thousandConcurrentGetsRunTheInnerGetOnce() async throws {
        let gate = Gate()
        let origin = Origin(gate: gate)
        let pooled = origin.pooled()
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<1000 { group.addTask { try await pooled.get("k") } }
            #expect(await yieldUntil { pooled.waiterCount(for: "k") == 1000 })
            gate.open()
            var results = 0
            for try await value in group {
                #expect(value == "value:k")
                results += 1
            }
            #expect(results == 1000)
        }
        #expect(origin.executions.load(ordering: .relaxed) == 1)
        #expect(pooled.executions == 1)
        #expect(pooled.inFlightCount == 0)
    }

    @Test func errorsAndMissesAreSharedToo() async throws {
        let gate = Gate()
        let pooled = Origin(gate: gate).pooled()
        async let first = Result(catching: { try await pooled.get("broken") })
        async let second = Result(catching: { try await pooled.get("broken") })
        #expect(await yieldUntil { pooled.waiterCount(for: "broken") == 2 })
        gate.open()
        for result in await [first, second] {
            #expect((#expect(throws: FetchError.self) { try result.get() })?.cause(as: TestError.self) == TestError("origin 500"))
        }
        #expect(pooled.executions == 1)
        #expect(try await pooled.getIfPresent("missing") == nil)
    }

    @Test func cancellingOneWaiterLeavesTheOthersRunning() async throws {
        let gate = Gate()
        let origin = Origin(gate: gate)
        let pooled = origin.pooled()
        let quitter = Task { try await pooled.get("k") }
        let stayer = Task { try await pooled.get("k") }
        #expect(await yieldUntil { pooled.waiterCount(for: "k") == 2 })
        quitter.cancel()
        await #expect(throws: CancellationError.self) { try await quitter.value }
        #expect(pooled.waiterCount(for: "k") == 1)
        #expect(origin.cancellations.load(ordering: .relaxed) == 0)
        gate.open()
        #expect(try await stayer.value == "value:k")
        #expect(origin.executions.load(ordering: .relaxed) == 1)
    }

    @Test func cancellingEveryWaiterCancelsTheSharedWork() async throws {
        let gate = Gate()
        let origin = Origin(gate: gate)
        let pooled = origin.pooled()
        let tasks = (0..<5).map { _ in Task { try await pooled.get("k") } }
        #expect(await yieldUntil { pooled.waiterCount(for: "k") == 5 })
        for task in tasks { task.cancel() }
        for task in tasks { await #expect(throws: CancellationError.self) { try await task.value } }
        #expect(await yieldUntil { origin.cancellations.load(ordering: .relaxed) == 1 })
        #expect(pooled.inFlightCount == 0)
    }

    @Test func finishedEntryIsNeverReused() async throws {
        let gate = Gate()
        gate.open()
        let origin = Origin(gate: gate)
        let pooled = origin.pooled()
        #expect(try await pooled.get("k") == "value:k")
        #expect(try await pooled.get("k") == "value:k")
        #expect(origin.executions.load(ordering: .relaxed) == 2)
    }

    @Test func stressManyKeysManyCallers() async throws {
        let executions = Mutex<[Int: Int]>([:])
        let gate = Gate()
        let origin = BasicFetcher<Int, Int> { key in
            executions.withLock { $0[key, default: 0] += 1 }
            try await gate.wait()
            return key * 2
        }
        let pooled = origin.pooled()
        try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for i in 0..<2000 { group.addTask { let key = i % 50; return (key, try await pooled.get(key)) } }
            #expect(await yieldUntil { (0..<50).reduce(0) { $0 + pooled.waiterCount(for: $1) } == 2000 })
            gate.open()
            for try await (key, value) in group { #expect(value == key * 2) }
        }
        #expect(executions.withLock { $0 }.values.allSatisfy { $0 == 1 })
        #expect(executions.withLock { $0.count } == 50)
    }

    @Test func composedPoolSharesBackfillsToo() async throws {
        let gate = Gate()
        let memory = FakeLevel<String, String>(name: "memory")
        let pooled = (memory + Origin(gate: gate)).pooled()
        async let a = pooled.get("k")
        async let b = pooled.get("k")
        #expect(await yieldUntil { pooled.waiterCount(for: "k") == 2 })
        gate.open()
        _ = try await (a, b)
        await pooled.waitForPendingWrites()
        #expect(memory.callCounts.sets == 1)
    }

    @Test func sharedReadRunsAtTheHighestPriorityOfItsWaiters() async throws {
        let gate = Gate()
        let seen = Mutex<TaskPriority?>(nil)
        let level = BasicFetcher<String, String> { key in
            try await gate.wait()
            seen.withLock { $0 = Task.currentPriority }
            return key
        }.pooled()
        let low = Task(priority: .low) { try await level.getIfPresent("k") }
        #expect(await poll { gate.waiting == 1 })
        let high = Task(priority: .high) { try await level.getIfPresent("k") }
        #expect(await poll { level.waiterCount(for: "k") == 2 })
        gate.open()
        _ = try await (low.value, high.value)
        #expect(level.executions == 1)
        #expect(seen.withLock { $0 }.map { $0 >= .high } == true, "\(String(describing: seen.withLock { $0 }))")
    }
}
