import Foundation
import Strata
import Testing

/// Levels reached without their types (`any CacheLevel`, an unspecialised
/// generic function) run the paths compiled where the level was created
/// (`SpecialisedPaths`); they must answer exactly what the concrete level
/// answers: hits, misses, expiry, sets, removes and back-fills.
@Suite struct ErasedPathTests {
    @inline(never)
    func erase<L: CacheLevel<String, Int>>(_ level: L) -> any CacheLevel<String, Int> { level }

    @_semantics("optimize.sil.specialize.generic.never") @inline(never)
    func genericGet<L: CacheLevel>(_ level: L, _ key: L.Key) async throws -> L.Value? {
        try await level.getIfPresent(key)
    }

    @Test func aMemoryLevelAnswersTheSameThroughAnExistential() async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20, clock: clock)
        let erased = erase(memory)
        try await erased.set(1, forKey: "a")
        #expect(memory.value(forKey: "a") == 1, "a set through the existential lands in the level")
        #expect(try await erased.getIfPresent("a") == 1)
        #expect(try await genericGet(memory, "a") == 1)
        #expect(try await erased.getIfPresent("b") == nil)
        try await erased.set(2, forKey: "b", expiresAt: clock.now().advanced(by: .seconds(5)))
        let entry = try await erased.entry(forKey: "b")
        #expect(entry?.value == 2 && entry?.expiresAt == clock.now().advanced(by: .seconds(5)))
        clock.advance(by: .seconds(5))
        #expect(try await erased.getIfPresent("b") == nil, "expired through the existential too")
        try await erased.remove("a")
        #expect(try await erased.getIfPresent("a") == nil)
        #expect(memory.count == 0)
        let read = try #require(erased.synchronousRead)
        memory.removeAll()
        try memory.store(3, forKey: "c")
        #expect(read.value("c") == 3 && read.value("d") == nil)
    }

    @Test func aMemoryLevelRefusesTooLargeValuesThroughAnExistential() async throws {
        let memory = MemoryCacheLevel<String, Int>(capacity: 10, cost: { $0 })
        let erased = erase(memory)
        try await erased.set(5, forKey: "k")
        await #expect(throws: MemoryCacheError.valueTooLarge(cost: 11, capacity: 10)) {
            try await erased.set(11, forKey: "k")
        }
        #expect(try await erased.getIfPresent("k") == nil, "the refused set dropped the older value")
    }

    @Test func aCompositionAnswersTheSameThroughAnExistential() async throws {
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let middle = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let origin = FakeLevel<String, Int>(name: "origin", ["k": 7])
        let stack = memory + middle + origin
        let cache = erase(stack)
        #expect(try await cache.getIfPresent("k") == 7)
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "k") == 7 && middle.value(forKey: "k") == 7, "back-filled both levels")
        #expect(try await cache.entry(forKey: "k")?.value == 7)
        #expect(try await genericGet(stack, "k") == 7)
        #expect(origin.callCounts.gets == 1, "later gets were hits above the origin")
        #expect(try await cache.getIfPresent("absent") == nil)
        try await cache.remove("k")
        #expect(try await cache.getIfPresent("k") == nil, "a removed value never comes back")
    }

    @_semantics("optimize.sil.specialize.generic.never") @inline(never)
    func genericThrowingGet<L: CacheLevel>(_ level: L, _ key: L.Key) async throws -> L.Value {
        try await level.get(key)
    }

    /// `get` without the concrete type answers a hit through
    /// `synchronousValue(forKey:)`; everything else still goes through the
    /// level's `async` read, so misses, expiry and lower levels are unchanged.
    @Test func getWithoutTheTypeAnswersHitsWithoutSuspendingAndEverythingElseAsBefore() async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20, clock: clock)
        let erased = erase(memory)
        try memory.store(1, forKey: "a")
        #expect(erased.synchronousValue(forKey: "a") == 1)
        #expect(try await erased.get("a") == 1)
        #expect(try await genericThrowingGet(memory, "a") == 1)
        await #expect(throws: FetchError.valueNotInCache) { try await erased.get("absent") }
        await #expect(throws: FetchError.valueNotInCache) { try await self.genericThrowingGet(memory, "absent") }

        // Expiry: the synchronous read removes and notes it; the get misses with the reason.
        try memory.store(2, forKey: "old", expiresAt: clock.now().advanced(by: .seconds(1)))
        clock.advance(by: .seconds(2))
        let trace = RequestTrace()
        await #expect(throws: FetchError.valueNotInCache) { try await trace.record { try await erased.get("old") } }
        #expect(trace.takeExpiredNote(), "the expired entry was noted for the miss reason")
        #expect(memory.count == 1)

        // A composition: a top hit is answered at once; a top miss reaches the origin and back-fills.
        let origin = FakeLevel<String, Int>(name: "origin", ["k": 7])
        let top = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let composed = erase(top + origin)
        #expect(composed.synchronousValue(forKey: "k") == nil)
        #expect(try await composed.get("k") == 7)
        await composed.waitForPendingWrites()
        #expect(composed.synchronousValue(forKey: "k") == 7, "back-filled into the top level")
        #expect(try await composed.get("k") == 7)
        #expect(origin.callCounts.gets == 1, "the second get was a hit at the top")
        try await composed.remove("k")
        await #expect(throws: FetchError.valueNotInCache) { try await composed.get("k") }

        // An instrumented level answers synchronously what the level inside
        // does, counting each hit; a miss there counts nothing (the get that
        // goes on counts it). Levels that must suspend answer nothing.
        let instrumented = top.instrumented(name: "L1")
        let observed = erase(instrumented)
        try top.store(3, forKey: "i")
        #expect(observed.synchronousValue(forKey: "i") == 3)
        #expect(observed.synchronousValue(forKey: "absent") == nil)
        #expect(try await observed.get("i") == 3)
        let counted = instrumented.statistics.snapshot()
        #expect(counted.hits == 2 && counted.misses == 0 && counted.gets == 2, "an instrumented level keeps counting every hit: \(counted)")
        #expect(erase(origin).synchronousValue(forKey: "k") == nil)
        #expect(memory.normalize().synchronousValue(forKey: "a") == 1)
    }

    /// A level whose two reads disagree on purpose, to see which one `get`
    /// used; with `complete`, its synchronous read is its whole read.
    struct TwoAnswers: CacheLevel {
        var complete = false
        func getIfPresent(_ key: String) async throws -> Int? { 1 }
        func synchronousValue(forKey key: String) -> Int? { key == "sync" ? 2 : nil }
        var synchronousReadIsComplete: Bool { complete }
        var synchronousRead: SynchronousRead<String, Int>? {
            guard complete else { return nil }
            return SynchronousRead(value: { $0 == "sync" ? 2 : nil }, entry: { $0 == "sync" ? CacheEntry(value: 2) : nil })
        }
        func set(_ value: Int, forKey key: String) async throws {}
        func remove(_ key: String) async throws {}
        func clear() async {}
        func onMemoryWarning() async {}
    }

    @Test func getThroughAnExistentialAsksTheSynchronousReadFirst() async throws {
        let erased = erase(TwoAnswers())
        #expect(try await erased.get("sync") == 2, "answered without the async read")
        #expect(try await erased.get("other") == 1, "not answered synchronously: the async read decides")
        #expect(try await genericThrowingGet(TwoAnswers(), "sync") == 2)
    }

    /// A miss through an erased memory level is one look-up, not two or three.
    @Test func aCompleteSynchronousReadAnswersMissesToo() async throws {
        let erased = erase(TwoAnswers(complete: true))
        #expect(try await erased.get("sync") == 2)
        await #expect(throws: FetchError.valueNotInCache) { try await erased.get("other") }
        let normalized = TwoAnswers(complete: true).normalize()
        #expect(normalized.synchronousReadIsComplete)
        #expect(try await normalized.getIfPresent("other") == nil, "the async closure was not asked")
        #expect(try await normalized.entry(forKey: "other") == nil)
        #expect(try await normalized.entry(forKey: "sync")?.value == 2)
        // Memory levels say so; compositions and other levels do not.
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        #expect(erase(memory).synchronousReadIsComplete && memory.normalize().synchronousReadIsComplete)
        let composed = memory + FakeLevel<String, Int>(name: "origin", ["k": 7])
        #expect(!erase(composed).synchronousReadIsComplete && !composed.normalize().synchronousReadIsComplete)
        #expect(try await erase(composed).get("k") == 7, "a composition's top miss still reaches below")
        #expect(try await composed.normalize().getIfPresent("k") == 7)
    }
}
