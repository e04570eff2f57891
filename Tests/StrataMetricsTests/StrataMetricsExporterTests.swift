import Foundation
import Metrics
import MetricsTestKit
import Strata
import StrataMetrics
import StrataTestSupport
import Testing

/// Exact counts for a scripted sequence through `memory + disk + origin`,
/// read back from swift-metrics' test backend.
@Suite struct StrataMetricsExporterTests {
    @Test func aScriptedSequenceThroughThreeLevelsGivesExactCounts() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let disk = try DiskCacheLevel<String, String>(name: "d", directory: dir.url, capacity: 1 << 20)
        let origin = BasicFetcher<String, String> { key in key.hasPrefix("user:") ? "row \(key)" : nil }
        let l1 = memory.instrumented(name: "L1"), l2 = disk.instrumented(name: "L2"), l3 = origin.instrumented(name: "origin")
        let stack = l1 + l2 + l3
        let metrics = TestMetrics()
        let exporter = StrataMetricsExporter(levels: [
            .init(l1.statistics, entries: { memory.count }, bytes: { memory.totalCost }),
            .init(l2.statistics, entries: { disk.count }),
            .init(l3.statistics),
        ], dimensions: [("service", "test")], factory: metrics)

        _ = try await stack.getIfPresent("user:1")  // miss, miss, origin hit; back-filled into L2 and L1
        await stack.waitForPendingWrites()
        _ = try await stack.getIfPresent("user:1")  // L1 hit
        _ = try await stack.getIfPresent("nobody")  // miss everywhere
        try await stack.set("set", forKey: "user:2")
        try await stack.remove("user:1")
        exporter.report()

        func total(_ name: String, _ level: String) throws -> Int64 {
            try metrics.expectCounter("strata_\(name)_total", [("level", level), ("service", "test")]).totalValue
        }
        #expect(try total("gets", "L1") == 3 && total("hits", "L1") == 1 && total("misses", "L1") == 2)
        #expect(try total("gets", "L2") == 2 && total("hits", "L2") == 0 && total("misses", "L2") == 2)
        #expect(try total("gets", "origin") == 2 && total("hits", "origin") == 1 && total("misses", "origin") == 1)
        #expect(try total("backfills", "L1") == 1 && total("backfills", "L2") == 1)
        #expect(try total("sets", "L1") == 1 && total("sets", "L2") == 1)
        #expect(try total("removes", "L1") == 1 && total("removes", "L2") == 1)
        #expect(try metrics.expectGauge("strata_entries", [("level", "L1"), ("service", "test")]).lastValue == 1)
        #expect(try metrics.expectGauge("strata_entries", [("level", "L2"), ("service", "test")]).lastValue == 1)

        // A second report adds only what happened since.
        _ = try await stack.getIfPresent("user:2")
        exporter.report()
        #expect(try total("gets", "L1") == 4 && total("hits", "L1") == 2)
        #expect(try total("gets", "L2") == 2, "L2 was not asked again")
    }

    @Test func timedGetsReachTheTimer() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let level = InstrumentedCache(memory, name: "L1", latencySampleRate: 1)
        let metrics = TestMetrics()
        let exporter = StrataMetricsExporter(levels: [.init(level.statistics)], factory: metrics)
        try await level.set("v", forKey: "k")
        for _ in 0..<10 { _ = try await level.getIfPresent("k") }
        exporter.report()
        let timer = try metrics.expectTimer("strata_get_duration_seconds", [("level", "L1")])
        #expect(timer.values.count == 10)
        #expect(timer.values.allSatisfy { $0 > 0 })
    }
}

@Suite struct StrataMetricsStackTests {
    @Test func anExporterOverAStackFindsItsInstrumentedLevels() async throws {
        let l1 = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "L1")
        let origin = BasicFetcher<String, String> { "value of \($0)" }.instrumented(name: "origin")
        let stack = (l1 + origin).normalize()
        let metrics = TestMetrics()
        let exporter = StrataMetricsExporter(stack: stack, factory: metrics)
        _ = try await stack.get("k")
        exporter.report()
        #expect(try metrics.expectCounter("strata_gets_total", [("level", "L1")]).totalValue == 1)
        #expect(try metrics.expectCounter("strata_hits_total", [("level", "origin")]).totalValue == 1)
    }
}
