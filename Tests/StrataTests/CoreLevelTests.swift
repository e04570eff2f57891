import Strata
import Synchronization
import Testing

@Suite struct CoreLevelTests {
    @Test func basicCacheForwardsEveryOperation() async throws {
        let log = Mutex<[String]>([])
        let cache = BasicCache<String, Int>(
            name: "closures",
            get: { key in log.withLock { $0.append("get \(key)") }; if key == "a" { return 1 }; throw FetchError.valueNotInCache },
            set: { value, key in log.withLock { $0.append("set \(key)=\(value)") } },
            remove: { key in log.withLock { $0.append("remove \(key)") } },
            clear: { log.withLock { $0.append("clear") } },
            onMemoryWarning: { log.withLock { $0.append("warn") } }
        )
        #expect(try await cache.get("a") == 1)
        await #expect(throws: FetchError.valueNotInCache) { try await cache.get("b") }
        #expect(try await cache.getIfPresent("b") == nil)
        try await cache.set(2, forKey: "b")
        try await cache.remove("b")
        await cache.clear()
        await cache.onMemoryWarning()
        #expect(cache.name == "closures")
        #expect(log.withLock { $0 } == ["get a", "get b", "get b", "set b=2", "remove b", "clear", "warn"])
    }

    @Test func getIfPresentMapsMissesToNilButThrowsRealErrors() async throws {
        let failing = BasicFetcher<String, Int> { _ in throw TestError("disk on fire") }
        await #expect(throws: TestError("disk on fire")) { try await failing.getIfPresent("k") }
        let skipped = BasicFetcher<String, Int> { _ in throw FetchError.conditionNotSatisfied }
        #expect(try await skipped.getIfPresent("k") == nil)
    }

    @Test func fetcherWritesAreSuccessfulNoOps() async throws {
        let fetcher = BasicFetcher<String, String> { "origin:\($0)" }
        try await fetcher.set("x", forKey: "k")
        try await fetcher.remove("k")
        await fetcher.clear()
        await fetcher.onMemoryWarning()
        #expect(try await fetcher.get("k") == "origin:k")
    }

    @Test func normalizeErasesAndIsANoOpOnBasicCache() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 100)
        let erased = memory.normalize()
        try await erased.set("v", forKey: "k")
        #expect(memory.value(forKey: "k") == "v")
        #expect(erased.name == "memory")
        let again = erased.normalize()
        #expect(try await again.get("k") == "v")
        // Normalising a BasicCache returns the same closures: no extra layer.
        let calls = Mutex(0)
        let basic = BasicCache<Int, Int>(get: { calls.withLock { $0 += 1 }; return $0 }, set: { _, _ in },
                                         remove: { _ in }, clear: {}, onMemoryWarning: {})
        _ = try await basic.normalize().normalize().get(1)
        #expect(calls.withLock { $0 } == 1)
    }

    @Test func levelsWrittenInAnotherModuleConform() async throws {
        struct Uppercaser: Fetcher {
            func getIfPresent(_ key: String) async throws -> String? { key.uppercased() }
        }
        let cache = MemoryCacheLevel<String, String>(capacity: 1000) + Uppercaser()
        #expect(try await cache.get("abc") == "ABC")
        #expect(Uppercaser().name == "Uppercaser")
    }
}

@Suite struct NormalizeForwardingTests {
    @Test func normalizedCompositionStillWaitsForBackfills() async throws {
        let top = MemoryCacheLevel<String, String>(capacity: 100)
        let erased = (top + BasicFetcher<String, String> { "v:\($0)" }).normalize()
        _ = try await erased.get("k")
        await erased.waitForPendingWrites()
        #expect(top.value(forKey: "k") == "v:k")
    }
}
