import Strata
import Synchronization
import Testing

@Suite struct BatchAndCapTests {
    @Test func batchGetSomeReturnsOnlyHits() async throws {
        let level = FakeLevel<String, Int>(name: "l", ["a": 1, "c": 3])
        let failing = level.conditioned { key in if key == "boom" { throw TestError("x") }; return true }
        let result = await failing.batchGetSome(["a", "b", "c", "boom", "a"])
        #expect(result == ["a": 1, "c": 3])
        #expect(level.callCounts.gets == 3)
        #expect(await level.batchGetSome([]) == [:])
    }

    @Test func batchRespectsMaxConcurrency() async throws {
        let inFlight = Atomic<Int>(0), peak = Atomic<Int>(0)
        let gate = Gate()
        let level = BasicFetcher<Int, Int> { key in
            let now = inFlight.add(1, ordering: .relaxed).newValue
            _ = peak.max(now, ordering: .relaxed)
            if key == 0 { try await gate.wait() } else { await Task.yield() }
            inFlight.subtract(1, ordering: .relaxed)
            return key
        }
        async let all = level.batchGetSome(Array(0..<40), maxConcurrency: 3)
        #expect(await yieldUntil { inFlight.load(ordering: .relaxed) >= 1 })
        gate.open()
        #expect(await all.count == 40)
        #expect(peak.load(ordering: .relaxed) <= 3)
        let ordered = try await level.allBatch(maxConcurrency: 4).get(Array(0..<40).reversed())
        #expect(ordered == Array(0..<40).reversed())
        #expect(peak.load(ordering: .relaxed) <= 4)
    }

    @Test func allBatchKeepsKeyOrderWhateverTheCompletionOrder() async throws {
        // Later keys answer first.
        let level = BasicFetcher<Int, String> { key in
            for _ in 0..<(20 - key) * 10 { await Task.yield() }
            return "v\(key)"
        }
        let values = try await level.allBatch().get(Array(0..<20))
        #expect(values == (0..<20).map { "v\($0)" })
    }

    @Test func allBatchFailsOnFirstFailureAndCancelsTheRest() async throws {
        let cancelled = Atomic<Int>(0)
        let gate = Gate()
        let level = BasicFetcher<Int, Int> { key in
            if key == 3 { throw TestError("key 3 is bad") }
            do { try await gate.wait() } catch { cancelled.add(1, ordering: .relaxed); throw error }
            return key
        }
        let failed = await #expect(throws: FetchError.self) { try await level.allBatch().get(Array(0..<10)) }
        #expect(failed?.cause(as: TestError.self) == TestError("key 3 is bad"))
        #expect(cancelled.load(ordering: .relaxed) == 9)
        await #expect(throws: FetchError.valueNotInCache) {
            try await FakeLevel<Int, Int>(name: "empty").allBatch().get([1, 2])
        }
    }

    @Test func allBatchSetAndRemoveReallyWrite() async throws {
        let level = FakeLevel<String, Int>(name: "l")
        let batch = level.allBatch()
        try await batch.set([1, 2, 3], forKey: ["a", "b", "c"])
        #expect(level.contents == ["a": 1, "b": 2, "c": 3])
        try await batch.remove(["a", "c"])
        #expect(level.contents == ["b": 2])
        await #expect(throws: BatchError.countMismatch(values: 1, keys: 2)) { try await batch.set([1], forKey: ["x", "y"]) }
        #expect(level.contents == ["b": 2])
    }

    @Test func capRequestsBoundsInFlightAndServesInOrder() async throws {
        let inFlight = Atomic<Int>(0), peak = Atomic<Int>(0)
        let order = Mutex<[Int]>([])
        let gates = (0..<12).map { _ in Gate() }
        let level = BasicFetcher<Int, Int> { key in
            let now = inFlight.add(1, ordering: .relaxed).newValue
            _ = peak.max(now, ordering: .relaxed)
            order.withLock { $0.append(key) }
            try await gates[key].wait()
            inFlight.subtract(1, ordering: .relaxed)
            return key
        }
        let capped = level.capRequests(2)
        var tasks: [Task<Int, any Error>] = []
        for key in 0..<12 {
            tasks.append(Task { try await capped.get(key) })
            // Each caller is queued before the next one starts: arrival order is known.
            #expect(await yieldUntil { capped.semaphore.waiting + inFlight.load(ordering: .relaxed) == key + 1 })
        }
        #expect(inFlight.load(ordering: .relaxed) == 2)
        // One at a time: each finished request lets exactly the next waiter in
        // (two resumed at once would race to record their order).
        for key in 0..<12 {
            gates[key].open()
            let started = min(key + 3, 12)
            #expect(await yieldUntil { order.withLock { $0.count } >= started })
        }
        for (key, task) in tasks.enumerated() { #expect(try await task.value == key) }
        #expect(peak.load(ordering: .relaxed) == 2)
        #expect(order.withLock { $0 } == Array(0..<12))
    }

    @Test func cancelledQueuedRequestLeavesTheLine() async throws {
        let gate = Gate()
        let capped = BasicFetcher<Int, Int> { key in try await gate.wait(); return key }.capRequests(1)
        let first = Task { try await capped.get(1) }
        #expect(await yieldUntil { capped.semaphore.available == 0 })
        let queued = Task { try await capped.get(2) }
        #expect(await yieldUntil { capped.semaphore.waiting == 1 })
        queued.cancel()
        await #expect(throws: CancellationError.self) { try await queued.value }
        #expect(capped.semaphore.waiting == 0)
        gate.open()
        #expect(try await first.value == 1)
        #expect(capped.semaphore.available == 1)
    }
}

/// A batch carries expiry both ways: a deadline given to a batch set reaches
/// every key, and a batch read carries the earliest of its keys' deadlines.
@Suite struct BatchExpiryTests {
    @Test func aBatchSetsDeadlineReachesEveryKeyAndAReadCarriesTheEarliest() async throws {
        let clock = TestClock(SystemClock().now())
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20, clock: clock)
        let batch = memory.allBatch()
        try await batch.set([1, 2], forKey: ["a", "b"], expiresAt: clock.now().advanced(by: .seconds(5)))
        try await memory.set(3, forKey: "c", expiresAt: clock.now().advanced(by: .seconds(2)))
        let entry = try #require(try await batch.entry(forKey: ["a", "c"]))
        #expect(entry.value == [1, 3])
        #expect(entry.expiresAt == clock.now().advanced(by: .seconds(2)), "the earliest deadline of the batch")
        clock.advance(by: .seconds(10))
        #expect(memory.value(forKey: "a") == nil && memory.value(forKey: "b") == nil, "the batch's deadline was dropped")
        #expect(try await batch.entry(forKey: ["a", "b"]) == nil)
    }
}
