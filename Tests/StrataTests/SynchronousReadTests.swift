import Foundation
import Strata
import Testing

/// An erased composition answers a hit on a memory top level synchronously,
/// and everything else through the composition as before.
@Suite struct SynchronousReadTests {
    @Test func anErasedCompositionFallsThroughAndBackfillsOnAMissOnTop() async throws {
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let origin = FakeLevel<String, Int>(name: "origin", ["k": 7])
        let cache = (memory + origin).normalize()
        #expect(cache.synchronousRead != nil)
        #expect(try await cache.get("k") == 7)
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "k") == 7, "back-filled")
        #expect(try await cache.get("k") == 7)
        #expect(origin.callCounts.gets == 1, "the second get was a hit on top")
        await #expect(throws: FetchError.valueNotInCache) { try await cache.get("absent") }
    }

    @Test func aWrapperOnTopSeesEveryGet() async throws {
        let top = MemoryCacheLevel<String, Int>(capacity: 1 << 20).instrumented(name: "L1")
        let cache = (top + MemoryCacheLevel<String, Int>(capacity: 1 << 20)).normalize()
        #expect(cache.synchronousRead == nil)
        try await cache.set(1, forKey: "k")
        _ = try await cache.get("k")
        #expect(top.statistics.snapshot().hits == 1)
    }
}
