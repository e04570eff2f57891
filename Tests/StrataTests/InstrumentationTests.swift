import Strata
import Synchronization
import Testing

@Suite struct InstrumentationTests {
    @Test func countsHitsMissesSetsAndBackfills() async throws {
        let l1 = MemoryCacheLevel<String, String>(capacity: 1000).instrumented(name: "L1")
        let origin = BasicFetcher<String, String> { key in
            if key == "boom" { throw TestError("origin down") }
            if key == "none" { throw FetchError.valueNotInCache }
            return "v:\(key)"
        }.instrumented(name: "origin")
        let cache = l1 + origin
        _ = try await cache.get("a")
        await cache.waitForPendingWrites()
        _ = try await cache.get("a")
        _ = try? await cache.get("none")
        _ = try? await cache.get("boom")
        try await cache.set("x", forKey: "b")
        try await cache.remove("b")
        let top = l1.statistics.snapshot()
        #expect(top.gets == 4)
        #expect(top.hits == 1)
        #expect(top.misses == 3)
        #expect(top.backfills == 1)
        #expect(top.sets == 1)
        #expect(top.removes == 1)
        #expect(top.hitRatio == 0.25)
        #expect(top.getP50 != nil && top.getP99 != nil)
        let bottom = origin.statistics.snapshot()
        #expect(bottom.gets == 3 && bottom.hits == 1 && bottom.misses == 1 && bottom.errors == 1)
        l1.statistics.reset()
        #expect(l1.statistics.snapshot() == StatisticsSnapshot())
    }

    @Test func backfillFailuresAreCountedNotThrown() async throws {
        let top = FakeLevel<String, Int>(name: "top")
        top.failSets(with: TestError("full"))
        let instrumented = top.instrumented(name: "top")
        let cache = instrumented + FakeLevel<String, Int>(name: "origin", ["k": 1])
        #expect(try await cache.get("k") == 1)
        await cache.waitForPendingWrites()
        #expect(instrumented.statistics.snapshot().backfillFailures == 1)
        #expect(instrumented.statistics.snapshot().setErrors == 0)
    }

    @Test func requestTraceShowsThePathThroughTheLevels() async throws {
        let l1 = MemoryCacheLevel<String, String>(capacity: 1000).instrumented(name: "L1")
        let l2 = MemoryCacheLevel<String, String>(capacity: 1000).instrumented(name: "L2")
        let origin = BasicFetcher<String, String> { "v:\($0)" }.instrumented(name: "origin")
        let cache = l1 + l2 + origin
        let trace = RequestTrace()
        _ = try await trace.record { try await cache.get("user:7") }
        await cache.waitForPendingWrites()
        let steps = trace.events.map { "\($0.level) \($0.isBackfill ? "backfill" : $0.operation.rawValue) \($0.outcome.rawValue)" }
        #expect(Array(steps.prefix(3)) == ["L1 get miss", "L2 get miss", "origin get hit"])
        #expect(Set(steps.dropFirst(3)) == ["L1 backfill stored", "L2 backfill stored"])
        #expect(trace.events.allSatisfy { $0.key == "user:7" })
    }

    @Test func eventStreamDeliversEvents() async throws {
        let level = MemoryCacheLevel<String, String>(capacity: 100).instrumented(name: "mem")
        let stream = level.statistics.events()
        try await level.set("v", forKey: "k")
        _ = try await level.get("k")
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.next()
        let second = await iterator.next()
        #expect(first?.outcome == .stored)
        #expect(second?.outcome == .hit)
        #expect(second?.description.hasPrefix("mem get k hit") == true)
    }

    @Test func histogramPercentiles() {
        let histogram = LatencyHistogram()
        #expect(histogram.snapshot().percentile(0.5) == nil)
        for _ in 0..<90 { histogram.record(nanoseconds: 1_000) }
        for _ in 0..<10 { histogram.record(nanoseconds: 1_000_000) }
        let snapshot = histogram.snapshot()
        #expect(snapshot.total == 100)
        let p50 = snapshot.percentile(0.5)!, p99 = snapshot.percentile(0.99)!
        #expect(p50 >= 800 && p50 <= 1_200)
        #expect(p99 >= 800_000 && p99 <= 1_200_000)
        histogram.record(nanoseconds: 0)
        histogram.record(nanoseconds: .max)
        #expect(histogram.snapshot().total == 102)
    }
}

@Suite struct RequestTraceWaitTests {
    @Test func waitReturnsWhenEventsArriveOrOnTimeout() async throws {
        let trace = RequestTrace()
        let event = CacheEvent(level: "L", operation: .get, outcome: .hit, key: "k", duration: .zero, isBackfill: false, error: nil)
        async let waited: Void = trace.waitForEvents(count: 2, timeout: .seconds(30))
        trace.append(event)
        trace.append(event)
        await waited
        #expect(trace.events.count == 2)
        let start = ContinuousClock.now
        await trace.waitForEvents(count: 5, timeout: .milliseconds(20))
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(trace.events.count == 2)
        await trace.waitForEvents(count: 1, timeout: .seconds(30))  // already satisfied: returns at once
    }
}

/// Percentiles of the smallest latencies: a 3 ns sample used to ask for the
/// lower bound of bucket 4, which trapped (a negative shift).
@Suite struct LatencyHistogramEdgeTests {
    @Test func tinyLatenciesHavePercentiles() {
        let histogram = LatencyHistogram()
        for nanoseconds: UInt64 in [0, 1, 2, 3, 3, 4, 7, 8] { histogram.record(nanoseconds: nanoseconds) }
        let snapshot = histogram.snapshot()
        #expect(snapshot.percentile(0.5) != nil && snapshot.percentile(1) != nil)
        #expect(snapshot.buckets(perGroup: 3).reduce(0) { $0 + $1.count } == 8)
        #expect(snapshot.buckets(perGroup: 5).reduce(0) { $0 + $1.count } == 8)
    }

    @Test func aWindowAcrossAResetIsEverythingSinceTheReset() {
        let histogram = LatencyHistogram()
        for _ in 0..<10 { histogram.record(nanoseconds: 1_000) }
        let before = histogram.snapshot()
        histogram.reset()
        histogram.record(nanoseconds: 50_000)
        let window = histogram.snapshot().minus(before)
        #expect(window.total == 1)
        #expect((window.percentile(0.99) ?? 0) > 40_000)
        for _ in 0..<3 { histogram.record(nanoseconds: 1_000) }
        #expect(histogram.snapshot().minus(window).total == 3)
    }
}
