import Strata
import Testing

@Suite struct CompositionTests {
    @Test func hitOnTopDoesNotAskBelow() async throws {
        let top = FakeLevel<String, Int>(name: "top", ["k": 1])
        let bottom = FakeLevel<String, Int>(name: "bottom", ["k": 2])
        #expect(try await (top + bottom).get("k") == 1)
        #expect(bottom.callCounts.gets == 0)
    }

    @Test func missFallsThroughAndBackfillsEveryLevelAbove() async throws {
        let l1 = FakeLevel<String, Int>(name: "L1")
        let l2 = FakeLevel<String, Int>(name: "L2")
        let origin = FakeLevel<String, Int>(name: "origin", ["k": 7])
        let cache = l1 + l2 + origin
        #expect(try await cache.get("k") == 7)
        await cache.waitForPendingWrites()
        #expect(l1.contents == ["k": 7])
        #expect(l2.contents == ["k": 7])
        #expect(try await cache.get("k") == 7)
        #expect(origin.callCounts.gets == 1)
    }

    @Test func errorOnTopFallsThroughAvailabilityFirst() async throws {
        let top = FakeLevel<String, Int>(name: "top")
        top.failGets(with: TestError("top down"))
        let bottom = FakeLevel<String, Int>(name: "bottom", ["k": 3])
        #expect(try await top.compose(bottom).get("k") == 3)
    }

    @Test func failedBackfillDoesNotFailTheGet() async throws {
        let top = FakeLevel<String, Int>(name: "top")
        top.failSets(with: TestError("disk full"))
        let bottom = FakeLevel<String, Int>(name: "bottom", ["k": 5])
        let cache = top + bottom
        #expect(try await cache.get("k") == 5)
        await cache.waitForPendingWrites()
        #expect(cache.backfillsStarted == 1)
        #expect(cache.backfillFailures == 1)
        #expect(top.contents.isEmpty)
    }

    @Test func getDoesNotWaitForTheBackfill() async throws {
        let gate = Gate()
        let slowTop = BasicCache<String, Int>(
            get: { _ in throw FetchError.valueNotInCache },
            set: { _, _ in try await gate.wait() },
            remove: { _ in }, clear: {}, onMemoryWarning: {}
        )
        let cache = slowTop + FakeLevel<String, Int>(name: "bottom", ["k": 9])
        // The back-fill is blocked on the gate, yet the get returns.
        #expect(try await cache.get("k") == 9)
        gate.open()
        await cache.waitForPendingWrites()
        #expect(cache.backfillFailures == 0)
    }

    @Test func allMissThrowsValueNotInCache() async throws {
        let cache = FakeLevel<String, Int>(name: "a") + FakeLevel<String, Int>(name: "b") + FakeLevel<String, Int>(name: "c")
        await #expect(throws: FetchError.valueNotInCache) { try await cache.get("nope") }
        #expect(try await cache.getIfPresent("nope") == nil)
    }

    @Test func realErrorsWithNoValueAreCarried() async throws {
        let a = FakeLevel<String, Int>(name: "a"); a.failGets(with: TestError("a broke"))
        let b = FakeLevel<String, Int>(name: "b")
        let c = FakeLevel<String, Int>(name: "c"); c.failGets(with: TestError("c broke"))
        do {
            _ = try await (a + b + c).get("k")
            Issue.record("expected an error")
        } catch let error as FetchError {
            #expect(error.reason == .levelsFailed && error.level == "a + b + c" && error.key == "k")
            #expect(error.failures.map(\.level) == ["a", "c"])
            #expect(error.failures.allSatisfy { $0.operation == .get })
            #expect(error.cause(as: TestError.self) == TestError("a broke"))
            #expect("\(error)" == "a + b + c: get k failed in 2 levels: a: a broke; c: c broke")
            #expect(error.failures.map { $0.underlying as? TestError } == [TestError("a broke"), TestError("c broke")])
            #expect(error.failures.allSatisfy { $0.key == "k" })
        }
    }

    @Test func setWritesAllLevelsAndNamesTheFailingOne() async throws {
        let a = FakeLevel<String, Int>(name: "memory")
        let b = FakeLevel<String, Int>(name: "disk"); b.failSets(with: TestError("read-only"))
        let c = FakeLevel<String, Int>(name: "redis")
        let cache = a + b + c
        do {
            try await cache.set(1, forKey: "k")
            Issue.record("expected the set to fail")
        } catch let error as LevelsFailedError {
            #expect(error.operation == .set)
            #expect(error.failingLevels == ["disk"])
            #expect("\(error)".contains("disk"))
        }
        #expect(a.contents == ["k": 1])
        #expect(c.contents == ["k": 1])
    }

    @Test func setIntoAFetcherBelowSucceeds() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 100)
        let cache = memory + BasicFetcher<String, String> { $0 }
        try await cache.set("v", forKey: "k")
        #expect(memory.value(forKey: "k") == "v")
    }

    @Test func removeClearAndMemoryWarningReachEveryLevel() async throws {
        let levels = (0..<3).map { FakeLevel<String, Int>(name: "L\($0)", ["k": $0, "j": $0]) }
        let cache = levels[0] + levels[1] + levels[2]
        try await cache.remove("k")
        #expect(levels.allSatisfy { $0.contents == ["j": Int($0.name.dropFirst())!] })
        await cache.onMemoryWarning()
        #expect(levels.allSatisfy { $0.contents.isEmpty && $0.callCounts.memoryWarnings == 1 })
        await cache.clear()
        #expect(levels.allSatisfy { $0.callCounts.clears == 1 })
    }

    @Test func removingAnAbsentKeyIsNotAnError() async throws {
        let cache = MemoryCacheLevel<String, String>(capacity: 10) + MemoryCacheLevel<String, String>(capacity: 10)
        try await cache.remove("never-there")
    }

    @Test func memoryWarningEmptiesEveryComposedMemoryLevel() async throws {
        let l1 = MemoryCacheLevel<String, String>(capacity: 1000)
        let l2 = MemoryCacheLevel<String, String>(capacity: 1000)
        let cache = l1 + l2 + BasicFetcher<String, String> { "v\($0)" }
        for key in ["a", "b", "c"] { _ = try await cache.get(key) }
        await cache.waitForPendingWrites()
        #expect(l1.count == 3 && l2.count == 3)
        await cache.onMemoryWarning()
        #expect(l1.count == 0 && l2.count == 0)
        #expect(l1.totalCost == 0 && l2.totalCost == 0)
    }

    @Test func composedNameListsTheLevels() {
        let cache = FakeLevel<String, Int>(name: "memory") + FakeLevel<String, Int>(name: "disk")
        #expect(cache.name == "memory + disk")
    }
}
