@testable import Strata
import Testing

/// A fail-safe stack's hit keeps its entry's deadline: a level above that
/// back-fills from it (a per-request memory level over a shared fail-safe
/// stack) must not keep the value past its TTL.
@Suite struct FailSafeEntryDeadlineTests {
    @Test func aHitThroughFailSafeCarriesItsDeadlineAndALevelAboveDropsItOnTime() async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock)
        let origin = BasicFetcher<String, String> { _ in "fresh" }
        let safe = (memory + origin).failSafe(maxStale: .seconds(3600))
        let deadline = clock.now().advanced(by: .seconds(10))
        try await safe.set("v1", forKey: "k", expiresAt: deadline)

        let entry = try await safe.entry(forKey: "k")
        #expect(entry?.value == "v1")
        #expect(entry?.expiresAt == deadline, "the fail-safe hit dropped its deadline: \(String(describing: entry))")

        let above = MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock)
        let cache = above + safe
        #expect(try await cache.get("k") == "v1")
        await cache.waitForPendingWrites()
        clock.advance(by: .seconds(11))
        #expect(above.value(forKey: "k") == nil, "the back-filled copy outlived the entry's TTL")
        #expect(try await cache.get("k") == "fresh")
    }

    @Test func aMissThroughFailSafeIsStillAMiss() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let safe = (memory + BasicFetcher<String, String> { _ in nil }).failSafe(maxStale: .seconds(60))
        #expect(try await safe.entry(forKey: "absent") == nil)
    }
}
