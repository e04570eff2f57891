import Dispatch
import Foundation
import Metrics
import MetricsTestKit
@testable import Strata
import StrataMetrics
import Synchronization
import Testing

/// Reviewer tests: the exporter's deltas.
@Suite struct ExporterReviewTests {
    /// Blocks the snapshot that reads the level's own counters, once armed.
    final class Gate: Sendable {
        let armed = Atomic<Bool>(false)
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        func pass() -> [String: Int] {
            if armed.exchange(false, ordering: .acquiringAndReleasing) {
                entered.signal()
                release.wait()
            }
            return [:]
        }
    }

    /// Two report() calls at once (a scrape handler and run(every:)): the one
    /// that snapshotted first but took the lock second sees its counts "go
    /// down", treats that as a reset and exports its whole total again; and
    /// it leaves its older snapshot as `last`, so the next report re-exports.
    @Test func concurrentReportsDoNotDoubleCount() async throws {
        let gate = Gate()
        let statistics = LevelStatistics(name: "L1", levelCounters: { gate.pass() })
        let metrics = TestMetrics()
        let exporter = StrataMetricsExporter(levels: [.init(statistics)], factory: metrics)

        statistics.counters.stripe.hits.add(5, ordering: .relaxed)
        gate.armed.store(true, ordering: .releasing)
        let firstDone = DispatchSemaphore(value: 0)
        // The first report snapshots 5 hits, then waits in the gate.
        let thread = Thread { exporter.report(); firstDone.signal() }
        thread.start()
        #expect(gate.entered.wait(timeout: .now() + 10) == .success)
        statistics.counters.stripe.hits.add(5, ordering: .relaxed)  // 10 hits in all
        // The second report, from another thread (it waits for the first).
        let secondDone = DispatchSemaphore(value: 0)
        let second = Thread { exporter.report(); secondDone.signal() }
        second.start()
        gate.release.signal()
        #expect(firstDone.wait(timeout: .now() + 10) == .success)
        #expect(secondDone.wait(timeout: .now() + 10) == .success)
        exporter.report()  // nothing happened since
        let hits = try metrics.expectCounter("strata_hits_total", [("level", "L1")]).totalValue
        #expect(hits == 10, "10 hits happened; exported \(hits)")
    }

    /// After statistics.reset(), a level that then counts more than it had
    /// counted before the reset shows no counter going down: the exporter
    /// subtracts the pre-reset snapshot and loses that many.
    @Test func aResetFollowedByMoreActivityIsCountedWhole() async throws {
        let level = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "L1")
        let metrics = TestMetrics()
        let exporter = StrataMetricsExporter(levels: [.init(level.statistics)], factory: metrics)
        for _ in 0..<10 { _ = try await level.getIfPresent("k") }
        exporter.report()
        level.statistics.reset()
        for _ in 0..<15 { _ = try await level.getIfPresent("k") }
        exporter.report()
        let gets = try metrics.expectCounter("strata_gets_total", [("level", "L1")]).totalValue
        let misses = try metrics.expectCounter("strata_misses_total", [("level", "L1")]).totalValue
        #expect(gets == 25 && misses == 25, "25 gets (all misses) happened; exported gets \(gets), misses \(misses)")
    }
}
