import Strata
import Testing

/// Reviewer test: levelStatistics through every combinator.
@Suite struct StackStatisticsReviewTests {
    @Test func levelStatisticsFindsTheLevelsInsideASwitch() async throws {
        let a = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "A")
        let b = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "B")
        let origin = BasicFetcher<String, String> { "v \($0)" }.instrumented(name: "origin")
        let stack = switchLevels(cacheA: a, cacheB: b) { $0.hasPrefix("a") ? .cacheA : .cacheB } + origin
        let names = stack.levelStatistics.map(\.name)
        #expect(names == ["A", "B", "origin"], "found \(names)")
    }
}

@Suite struct JitterReviewTests {
    @Test func aHugeJitterNeitherTrapsNorShortensTheTTL() async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<Int, String>(capacity: 1 << 20, clock: clock)
        let stack = memory + MemoryCacheLevel<Int, String>(capacity: 1 << 20, clock: clock)
        let start = clock.now()
        for key in 0..<20 { _ = try await stack.get(key, ttl: .seconds(60), jitter: .seconds(Int64.max)) { "v\($0)" } }
        _ = try await stack.getAll(Array(20..<40), ttl: .seconds(60), jitter: .seconds(Int64.max)) { keys in
            Dictionary(uniqueKeysWithValues: keys.map { ($0, "v\($0)") })
        }
        let deadlines = (0..<40).compactMap { memory.storedEntry(forKey: $0)?.expiresAt }
        #expect(deadlines.count == 40 && deadlines.allSatisfy { $0 >= start.advanced(by: .seconds(60)) })
        // Sub-nanosecond jitter.
        _ = try await stack.get(99, ttl: .seconds(1), jitter: .nanoseconds(1) / 2) { "v\($0)" }
        #expect(memory.storedEntry(forKey: 99)?.expiresAt == start.advanced(by: .seconds(1)))
    }
}
