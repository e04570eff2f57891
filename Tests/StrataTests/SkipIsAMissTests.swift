import Strata
import Testing

/// A condition that is not satisfied is a skip, that is a miss, never a failure.
@Suite struct SkipIsAMissTests {
    @Test func declinedKeyTransformIsAMissNotAFailure() async throws {
        let origin = BasicFetcher<Int, String> { "v\($0)" }
        let positiveKeys = OneWayTransformationBox<String, Int> { Int($0) ?? 0 }.conditioned { (Int($0) ?? 0) > 0 }
        let level = origin.transformKeys(positiveKeys)
        #expect(try await level.getIfPresent("-1") == nil)
        #expect(try await level.getIfPresent("3") == "v3")
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let cache = memory + level
        await #expect(throws: FetchError.valueNotInCache) { try await cache.get("-1") }
        try await cache.set("x", forKey: "-1")  // skipped below, stored above
        await cache.waitForPendingWrites()
        #expect(cache.backfillFailures == 0)
    }

    @Test func declinedPostProcessIsAMiss() async throws {
        let origin = BasicFetcher<String, String> { $0 == "empty" ? "" : $0 }
        let level = origin.postProcess(OneWayTransformationBox<String, String> { $0.uppercased() }.conditioned { !$0.isEmpty })
        #expect(try await level.getIfPresent("empty") == nil)
        #expect(try await level.getIfPresent("abc") == "ABC")
        let cache = MemoryCacheLevel<String, String>(capacity: 1000) + level
        await #expect(throws: FetchError.valueNotInCache) { try await cache.get("empty") }
        await cache.waitForPendingWrites()
        #expect(cache.backfillFailures == 0)
    }

    @Test func declinedInverseTransformDropsTheOldValueInsteadOfKeepingIt() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let nonEmpty = TwoWayTransformationBox<String, String>(
            transform: { $0 }, inverseTransform: { $0 }
        ).conditioned({ !$0.isEmpty }, inverseCondition: { !$0.isEmpty })
        let level = memory.transformValues(nonEmpty)
        try await level.set("old", forKey: "k")
        try await level.set("", forKey: "k")
        #expect(memory.value(forKey: "k") == nil, "a skipped set left the value it should have replaced")
    }
}
