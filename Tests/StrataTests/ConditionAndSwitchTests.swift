import Strata
import Synchronization
import Testing

@Suite struct ConditionAndSwitchTests {
    @Test func falseConditionSkipsGetsAndMakesWritesNoOps() async throws {
        let inner = FakeLevel<String, Int>(name: "inner", ["big": 1])
        let onlySmall = inner.conditioned { $0.count < 3 }
        // A skip is a miss, never a failure.
        await #expect(throws: FetchError.valueNotInCache) { try await onlySmall.get("big") }
        #expect(try await onlySmall.getIfPresent("big") == nil)
        try await onlySmall.set(2, forKey: "huge")
        try await onlySmall.remove("big")
        #expect(inner.contents == ["big": 1])
        try await onlySmall.set(3, forKey: "ok")
        #expect(inner.contents["ok"] == 3)
    }

    @Test func skippedLevelIsAMissAndNeverBackfilled() async throws {
        let top = FakeLevel<String, Int>(name: "top")
        let enabled = Atomic<Bool>(false)
        let cache = top.conditioned { _ in enabled.load(ordering: .relaxed) } + FakeLevel<String, Int>(name: "origin", ["k": 1])
        #expect(try await cache.get("k") == 1)
        await cache.waitForPendingWrites()
        #expect(top.callCounts.gets == 0)
        #expect(top.contents.isEmpty)
        enabled.store(true, ordering: .relaxed)
        #expect(try await cache.get("k") == 1)
        await cache.waitForPendingWrites()
        #expect(top.contents == ["k": 1])
    }

    @Test func skipWhileIsTheInverse() async throws {
        let inner = FakeLevel<String, Int>(name: "inner", ["tmp:1": 1, "a": 2])
        let level = inner.skipWhile { $0.hasPrefix("tmp:") }
        #expect(try await level.getIfPresent("tmp:1") == nil)
        #expect(try await level.get("a") == 2)
    }

    @Test func throwingConditionIsATypedErrorNamingLevelAndKey() async throws {
        let level = FakeLevel<String, Int>(name: "disk", ["k": 1]).conditioned { _ in throw TestError("flag service down") }
        do {
            _ = try await level.get("k")
            Issue.record("expected failure")
        } catch let failure as LevelFailure {
            #expect(failure.level == "disk")
            #expect(failure.operation == .condition)
            #expect(failure.key == "k")
        }
    }

    @Test func switchRoutesPerKeyAndBroadcastsClear() async throws {
        let a = FakeLevel<String, Int>(name: "a")
        let b = FakeLevel<String, Int>(name: "b")
        let lanes = switchLevels(cacheA: a, cacheB: b) { $0.hasPrefix("img:") ? .cacheB : .cacheA }
        try await lanes.set(1, forKey: "user:1")
        try await lanes.set(2, forKey: "img:2")
        #expect(a.contents == ["user:1": 1])
        #expect(b.contents == ["img:2": 2])
        #expect(try await lanes.get("img:2") == 2)
        await #expect(throws: FetchError.valueNotInCache) { try await lanes.get("img:1") }
        try await lanes.remove("img:2")
        #expect(b.contents.isEmpty && a.callCounts.removes == 0)
        await lanes.clear()
        await lanes.onMemoryWarning()
        #expect(a.callCounts.clears == 1 && b.callCounts.clears == 1)
        #expect(a.callCounts.memoryWarnings == 1 && b.callCounts.memoryWarnings == 1)
    }
}
