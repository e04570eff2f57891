import Foundation
@testable import Strata
import StrataTestSupport
import Testing

@Suite struct StatisticsTests {
    @Test func countsAreExactUnderEightConcurrentTasks() async throws {
        let memory = MemoryCacheLevel<Int, Int>(capacity: 1 << 20)
        for key in 0..<100 { try memory.store(key, forKey: key) }
        let level = memory.instrumented(name: "L1")
        let perTask = 5_000
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for i in 0..<perTask {
                        // Keys 0..<100 hit, 100..<200 miss: half and half.
                        _ = try? await level.getIfPresent((i + task) % 200)
                        if i % 100 == 0 { try? await level.set(i, forKey: 1_000 + task) }
                    }
                }
            }
        }
        let s = level.statistics.snapshot()
        #expect(s.gets == 8 * perTask)
        #expect(s.hits == 8 * perTask / 2)
        #expect(s.misses == 8 * perTask / 2)
        #expect(s.requests == 8 * perTask)
        #expect(s.hitRatio == 0.5)
        #expect(s.sets == 8 * perTask / 100)
        #expect(s.getP50 != nil && s.getP99 != nil)
        #expect(s.levelCounters == nil, "no evictions: no level counters")
    }

    @Test func minusIsTheDifferenceOfTwoSnapshots() async throws {
        let level = MemoryCacheLevel<String, String>(capacity: 20, countLimit: 2).instrumented(name: "L1")
        try await level.set("a", forKey: "1")
        _ = try await level.getIfPresent("1")
        let before = level.statistics.snapshot()
        _ = try await level.getIfPresent("1")
        _ = try await level.getIfPresent("2")
        try await level.set("b", forKey: "2")
        try await level.set("c", forKey: "3")  // evicts "1"
        try await level.remove("2")
        let after = level.statistics.snapshot()
        let window = after.minus(before)
        #expect(window.gets == 2 && window.hits == 1 && window.misses == 1 && window.errors == 0)
        #expect(window.requests == 2 && window.hitRatio == 0.5)
        #expect(window.sets == 2 && window.removes == 1)
        #expect(window.levelCounters?["evictions"] == 1)
        #expect(after.minus(after).gets == 0)
        #expect(after.minus(StatisticsSnapshot()).gets == after.gets)
    }

    @Test func failedRemovesAndSetsAreCountedApartFromGetErrors() async throws {
        let fake = FakeLevel<String, Int>(name: "fake")
        fake.failSets(with: TestError("disk full"))
        let level = fake.instrumented(name: "fake")
        _ = try? await level.set(1, forKey: "k")
        let s = level.statistics.snapshot()
        #expect(s.setErrors == 1 && s.errors == 0 && s.sets == 0)
        #expect(level.statistics.lastError?.contains("disk full") == true)
        #expect(s.levelCounters == nil)
    }

    @Test func theFirstGetIsAlwaysTimed() async throws {
        let level = MemoryCacheLevel<String, String>(capacity: 100).instrumented(name: "L1")
        _ = try await level.getIfPresent("k")
        #expect(level.statistics.snapshot().getP50 != nil)
        level.statistics.reset()
        #expect(level.statistics.snapshot() == StatisticsSnapshot())
        _ = try await level.getIfPresent("k")
        #expect(level.statistics.snapshot().getP50 != nil)
    }

    /// The sampler times about one get in 16; percentiles from the sample are
    /// within 5% of those from every observation.
    @Test func sampledPercentilesStayWithinFivePercentOfExact() async {
        await offThePool {
            let stripe = CounterStripe(seed: 12345)
            let exact = LatencyHistogram(), sampled = LatencyHistogram()
            var rng = SystemRandomNumberGenerator()
            var timed = 0
            let total = 400_000
            for _ in 0..<total {
                // 90% near 18 µs, 9.5% near 245 µs, 0.5% near 3 ms (bucket centres, ±3%).
                let roll = Int.random(in: 0..<1000, using: &rng)
                let centre: Double = roll < 900 ? 18_432 : (roll < 995 ? 245_760 : 3_145_728)
                let ns = UInt64(centre * Double.random(in: 0.97...1.03, using: &rng))
                exact.record(nanoseconds: ns)
                if stripe.sample(shift: 4) {
                    sampled.record(nanoseconds: ns)
                    timed += 1
                }
            }
            #expect(abs(Double(timed) / Double(total) - 1.0 / 16) < 0.01)
            for fraction in [0.5, 0.99] {
                let e = Double(exact.snapshot().percentile(fraction)!)
                let s = Double(sampled.snapshot().percentile(fraction)!)
                #expect(abs(s - e) / e <= 0.05, "p\(Int(fraction * 100)): sampled \(s) exact \(e)")
            }
        }
    }

    @Test func aFailedRemoveIsARemoveErrorAndLeavesTheHitRatioAlone() async throws {
        let level = BasicCache<String, Int>(
            getIfPresent: { _ in 1 }, set: { _, _ in }, remove: { _ in throw TestError("read-only") },
            clear: {}, onMemoryWarning: {}
        ).instrumented(name: "L1")
        _ = try await level.getIfPresent("k")
        await #expect(throws: TestError.self) { try await level.remove("k") }
        let s = level.statistics.snapshot()
        #expect(s.removeErrors == 1 && s.removes == 0 && s.errors == 0)
        #expect(s.hitRatio == 1)
    }

    @Test func levelCountersReachTheSnapshotThroughErasureAndWrappers() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 100, countLimit: 1, policy: .lru)
        let level = memory.normalize().pooled().normalize().instrumented(name: "L1")
        try await level.set("a", forKey: "1")
        try await level.set("b", forKey: "2")  // evicts "1"
        #expect(memory.evictions == 1)
        #expect(level.statistics.snapshot().levelCounters == ["evictions": 1])
        level.statistics.reset()
        #expect(level.statistics.snapshot().levelCounters == nil, "counted from the reset")
        // Under `.adaptive` the declined sets are counted too.
        let adaptive = MemoryCacheLevel<String, String>(capacity: 100, countLimit: 1, policy: .adaptive)
        let observed = adaptive.normalize().instrumented(name: "L1")
        try await observed.set("a", forKey: "1")
        try await observed.set("b", forKey: "2")  // seen as often as "1": declined
        #expect(observed.statistics.snapshot().levelCounters == ["evictions": 1, "admissionsRejected": 1])
    }

    @Test func anErasedMemoryLevelAnswersLikeTheLevel() async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(capacity: 100, clock: clock)
        let erased = memory.normalize()
        try await erased.set("a", forKey: "1", expiresAt: clock.now().advanced(by: .seconds(5)))
        #expect(try await erased.getIfPresent("1") == "a")
        #expect(try await erased.entry(forKey: "1")?.expiresAt == clock.now().advanced(by: .seconds(5)))
        #expect(try await erased.getIfPresent("2") == nil)
        clock.advance(by: .seconds(6))
        #expect(try await erased.getIfPresent("1") == nil)
        #expect(memory.count == 0, "the erased read expired the entry in the level")
    }
}
