import Strata
import Synchronization
import Testing

@Suite struct StaleThenFreshTests {
    func collect<V>(_ stream: AsyncThrowingStream<CacheReading<V>, any Error>) async -> ([CacheReading<V>], (any Error)?) {
        var readings: [CacheReading<V>] = []
        do {
            for try await reading in stream { readings.append(reading) }
            return (readings, nil)
        } catch {
            return (readings, error)
        }
    }

    @Test func cachedFirstThenFreshThenBackfilled() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        try await memory.set("stale", forKey: "k")
        let cache = memory + BasicFetcher<String, String> { _ in "fresh" }
        let (readings, error) = await collect(cache.values(forKey: "k"))
        #expect(error == nil)
        #expect(readings == [CacheReading(value: "stale", source: .cached), CacheReading(value: "fresh", source: .fresh)])
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "k") == "fresh")
    }

    @Test func onlyFreshWhenNothingIsCached() async throws {
        let cache = MemoryCacheLevel<String, String>(capacity: 1000) + BasicFetcher<String, String> { "v:\($0)" }
        let (readings, error) = await collect(cache.values(forKey: "k"))
        #expect(error == nil && readings == [CacheReading(value: "v:k", source: .fresh)])
    }

    @Test func failedRefreshKeepsTheStaleValue() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        try await memory.set("stale", forKey: "k")
        let cache = memory + BasicFetcher<String, String> { _ in throw TestError("origin down") }
        let (readings, error) = await collect(cache.values(forKey: "k"))
        #expect(readings == [CacheReading(value: "stale", source: .cached)])
        #expect((error as? FetchError)?.cause(as: TestError.self) == TestError("origin down"), "\(String(describing: error))")
        #expect(memory.value(forKey: "k") == "stale", "the stale value is not lost")
    }

    @Test func nothingAnywhereIsAMiss() async {
        let cache = MemoryCacheLevel<String, String>(capacity: 1000) + FakeLevel<String, String>(name: "origin")
        let (readings, error) = await collect(cache.values(forKey: "k"))
        #expect(readings.isEmpty)
        #expect(error as? FetchError == .valueNotInCache)
    }

    @Test func droppingTheStreamCancelsTheRefresh() async throws {
        let gate = Gate()
        let cancelled = Atomic<Bool>(false)
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        try await memory.set("stale", forKey: "k")
        let cache = memory + BasicFetcher<String, String> { _ in
            do { try await gate.wait() } catch { cancelled.store(true, ordering: .relaxed); throw error }
            return "fresh"
        }
        do {
            var iterator = cache.values(forKey: "k").makeAsyncIterator()
            #expect(try await iterator.next()?.source == .cached)
            #expect(await yieldUntil { gate.waiting == 1 })
        }  // iterator and stream dropped here
        #expect(await yieldUntil { cancelled.load(ordering: .relaxed) })
    }
}
