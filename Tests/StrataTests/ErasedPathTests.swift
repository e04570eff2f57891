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
        let cache = erase(memory + middle + origin)
        #expect(try await cache.getIfPresent("k") == 7)
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "k") == 7 && middle.value(forKey: "k") == 7, "back-filled both levels")
        #expect(try await cache.entry(forKey: "k")?.value == 7)
        #expect(try await genericGet(memory + middle + origin, "k") == 7)
        #expect(origin.callCounts.gets == 1, "later gets were hits above the origin")
        #expect(try await cache.getIfPresent("absent") == nil)
        try await cache.remove("k")
        #expect(try await cache.getIfPresent("k") == nil, "a removed value never comes back")
    }
}
