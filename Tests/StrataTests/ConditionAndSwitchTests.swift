import Strata
import Synchronization
import Testing

@Suite struct ConditionAndSwitchTests {
    @Test func falseConditionSkipsGetsAndSetsStoreNothing() async throws {
        let inner = FakeLevel<String, Int>(name: "inner", ["big": 1, "old": 0])
        let onlySmall = inner.conditioned { $0.count < 3 }
        // A skip is a miss, never a failure.
        await #expect(throws: FetchError.valueNotInCache) { try await onlySmall.get("big") }
        #expect(try await onlySmall.getIfPresent("big") == nil)
        try await onlySmall.set(2, forKey: "huge")
        #expect(inner.contents["huge"] == nil, "a skipped set stores nothing")
        try await onlySmall.set(9, forKey: "old")
        #expect(inner.contents["old"] == nil, "a skipped set drops the copy it would have replaced")
        try await onlySmall.remove("big")
        #expect(inner.contents["big"] == nil, "a remove always reaches the level")
        try await onlySmall.set(3, forKey: "ok")
        #expect(inner.contents["ok"] == 3)
    }

    /// A condition toggled off and on again (the explorer's toggles): what
    /// was overwritten or removed meanwhile never comes back.
    @Test func aToggledConditionNeverBringsBackAnOverwrittenOrRemovedValue() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let enabled = Atomic<Bool>(true)
        let origin = FakeLevel<String, String>(name: "origin")
        let cache = memory.conditioned { _ in enabled.load(ordering: .relaxed) } + origin
        try await cache.set("a", forKey: "k")
        try await cache.set("a", forKey: "gone")
        enabled.store(false, ordering: .relaxed)
        try await cache.set("b", forKey: "k")
        try await cache.remove("gone")
        enabled.store(true, ordering: .relaxed)
        #expect(try await cache.get("k") == "b")
        #expect(try await cache.getIfPresent("gone") == nil)
    }

    /// A switch whose choice changes over time: the lane a key used to go to
    /// keeps no value that a later write replaced or removed.
    @Test func aSwitchWhoseChoiceChangesNeverBringsBackAnOverwrittenValue() async throws {
        let a = FakeLevel<String, Int>(name: "a"), b = FakeLevel<String, Int>(name: "b")
        let toB = Atomic<Bool>(false)
        let lanes = switchLevels(cacheA: a, cacheB: b) { _ in toB.load(ordering: .relaxed) ? .cacheB : .cacheA }
        try await lanes.set(1, forKey: "k")
        try await lanes.set(1, forKey: "gone")
        toB.store(true, ordering: .relaxed)
        try await lanes.set(2, forKey: "k")
        try await lanes.remove("gone")
        toB.store(false, ordering: .relaxed)
        #expect(try await lanes.getIfPresent("k") == nil, "lane a kept the value the set replaced")
        #expect(try await lanes.getIfPresent("gone") == nil, "lane a kept the removed value")
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
        } catch let error as FetchError {
            let failure = try #require(error.failures.first)
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
        #expect(b.contents.isEmpty && a.contents == ["user:1": 1])  // a remove reaches both lanes
        await lanes.clear()
        await lanes.onMemoryWarning()
        #expect(a.callCounts.clears == 1 && b.callCounts.clears == 1)
        #expect(a.callCounts.memoryWarnings == 1 && b.callCounts.memoryWarnings == 1)
    }
}
