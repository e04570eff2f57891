import Foundation
import Strata
@testable import StrataExplorer
import StrataTestSupport
import Testing

/// Compare mode's model: every command and one workload sent to both
/// pipelines, a side named where a command needs one, one event log.
@Suite struct ComparisonModelTests {
    /// An LRU L1 of `count` entries over an origin.
    static func file(_ name: String, count: Int) -> String {
        """
        name: \(name)
        levels:
          - name: L1
            kind: memory
            capacity: 1MiB
            count: \(count)
            policy: lru
          - name: origin
            kind: origin
            latency: 0ms
        """
    }

    static func comparison(small: Int = 10, big: Int = 100) throws -> ComparisonModel {
        ComparisonModel(pipelineA: try Pipeline(try PipelineFile.parse(file("small", count: small), file: "a.yaml")),
                        pipelineB: try Pipeline(try PipelineFile.parse(file("big", count: big), file: "b.yaml")),
                        fileA: "a.yaml", fileB: "b.yaml")
    }

    static func withShutdown(_ comparison: ComparisonModel, _ body: () async throws -> Void) async rethrows {
        do { try await body() } catch {
            await comparison.shutdown()
            throw error
        }
        await comparison.shutdown()
    }

    /// One workload feeds both: the same number of gets reach each L1, and
    /// a loop of 20 keys never hits an L1 of 10 but hits one of 100 after
    /// its first round. At 50/s the workload has one worker, so each side
    /// gets the keys strictly in order (with more, gets in flight together
    /// can reach a side in another order, as on a single pipeline). Stopped
    /// mid-way (no time limit: a loaded machine sends what it can), every
    /// request sent to A was sent to B too.
    @Test func oneWorkloadFeedsBothSides() async throws {
        let comparison = try Self.comparison()
        try await Self.withShutdown(comparison) {
            let outcome = await comparison.execute(.load(pattern: .loop, keys: 20, rate: 50, seconds: nil))
            #expect(!outcome.isError, "\(outcome.message)")
            let workload = try #require(comparison.a.workload)
            #expect(comparison.b.workload === workload, "one workload, not one per side")
            let deadline = ContinuousClock.now + .seconds(60)
            while workload.completed < 45, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            let stopped = await comparison.execute(.loadStop)
            #expect(stopped.message == "A, B: workload stopped", "\(stopped.message)")
            await workload.finished()
            await comparison.a.pipeline.cache.waitForPendingWrites()
            await comparison.b.pipeline.cache.waitForPendingWrites()
            let a = comparison.a.currentPanes(), b = comparison.b.currentPanes()
            let sent = workload.completed
            #expect(sent >= 45)
            #expect(a[0].stats.gets == sent && b[0].stats.gets == sent, "A \(a[0].stats.gets), B \(b[0].stats.gets), sent \(sent)")
            #expect(a[0].stats.hits == 0, "\(a[0].stats)")
            #expect(b[0].stats.hits == sent - 20, "\(b[0].stats)")
            #expect(a[1].stats.gets == sent && b[1].stats.gets == 20)
            // The strip: origin requests of each and their difference.
            let view = comparison.view()
            let origin = try #require(view.rows.first { $0[0] == "requests to origin / origin" })
            #expect(origin == ["requests to origin / origin", "\(sent)", "20", "\(20 - sent) (\(String(format: "%+.1f", Double(20 - sent) / Double(sent) * 100))%)"],
                    "\(view.rows)")
            #expect(view.rows.contains { $0[0] == "p99 of a get" && $0[1] != "-" && $0[2] != "-" }, "\(view.rows)")
            #expect(comparison.a.events.contains { $0.text.hasPrefix("A load loop over 20 keys at 50/s") })
            #expect(comparison.a.events.contains { $0.text.hasPrefix("B load loop over 20 keys at 50/s") })
        }
    }

    /// Stress: 40 workers stopped mid-flight, again and again, against two
    /// identical pipelines, over a loop of 500 keys
    /// that an L1 of 10 never hits: every level's counts agree, so each
    /// request reached both sides whole (a get cancelled on one side only
    /// would stop there before the origin), never one side only.
    @Test func stoppingUnderLoadNeverLeavesARequestOneSided() async throws {
        let comparison = try Self.comparison(small: 10, big: 10)
        try await Self.withShutdown(comparison) {
            for round in 0..<6 {
                if round == 3 { _ = await comparison.execute(.reset) }  // between loads: both from zero
                _ = await comparison.execute(.load(pattern: .loop, keys: 500, rate: 2000, seconds: nil))
                let workload = try #require(comparison.a.workload)
                let deadline = ContinuousClock.now + .seconds(30)
                while workload.completed < 100 * (round + 1), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                _ = await comparison.execute(.loadStop)
                await workload.finished()
                await comparison.a.pipeline.cache.waitForPendingWrites()
                await comparison.b.pipeline.cache.waitForPendingWrites()
                let a = comparison.a.currentPanes().map(\.stats.gets), b = comparison.b.currentPanes().map(\.stats.gets)
                #expect(a == b && a[0] > 0, "round \(round): A \(a) gets, B \(b)")
            }
        }
    }

    /// `replay` reads the same trace on each side: a loop of 3 keys never
    /// hits an LRU L1 of 2 and hits one of 3 on its second round.
    @Test func aReplayRunsOnBothSides() async throws {
        let directory = TemporaryDirectory("strata-compare-replay")
        defer { directory.remove() }
        let trace = directory.path + "/loop.trace"
        try "#strata-trace 1\n0 get a\n1 get b\n2 get c\n3 get a\n4 get b\n5 get c\n".write(toFile: trace, atomically: true, encoding: .utf8)
        let comparison = try Self.comparison(small: 2, big: 3)
        try await Self.withShutdown(comparison) {
            let outcome = await comparison.execute(.replay(path: trace, speed: nil))
            #expect(outcome.message.hasPrefix("A, B: replay loop started: 6 requests"), "\(outcome.message)")
            await comparison.a.replayFinished()
            await comparison.b.replayFinished()
            let a = comparison.a.currentPanes()[0].stats, b = comparison.b.currentPanes()[0].stats
            #expect(a.gets == 6 && a.hits == 0, "\(a)")
            #expect(b.gets == 6 && b.hits == 3, "\(b)")
            let served = try #require(comparison.view().rows.first { $0[0] == "served from cache" })
            #expect(served == ["served from cache", "0.0%", "50.0%", "+50.0 points"])
        }
    }

    /// A typed get goes to A, then B; both sides' lines land in one log.
    @Test func aGetGoesToBothAndLogsOnce() async throws {
        let comparison = try Self.comparison()
        await Self.withShutdown(comparison) {
            let outcome = await comparison.execute(.get(key: "k"))
            #expect(outcome.message.firstMatch(of: /^get k: A from origin in \S+ · B from origin in \S+ \(\d+ bytes\)$/) != nil,
                    "\(outcome.message)")
            #expect(comparison.a.status == outcome)
            // The first get's back-fills into L1 land in the background.
            await comparison.a.pipeline.cache.waitForPendingWrites()
            await comparison.b.pipeline.cache.waitForPendingWrites()
            let again = await comparison.execute(.get(key: "k"))
            #expect(again.message.firstMatch(of: /^get k: A from L1 in \S+ · B from L1 in \S+ \(\d+ bytes\)$/) != nil,
                    "\(again.message)")
            #expect(comparison.a.currentPanes()[0].stats.gets == 2 && comparison.b.currentPanes()[0].stats.gets == 2)
            let lines = comparison.a.events.map(\.text)
            #expect(lines.contains { $0.hasPrefix("A get k  L1 miss") } && lines.contains { $0.hasPrefix("B get k  L1 miss") },
                    "\(lines)")
            #expect(comparison.b.events.isEmpty, "B logs into A's log")
            _ = await comparison.execute(.reset)
            #expect(comparison.a.currentPanes()[0].stats.gets == 0 && comparison.b.currentPanes()[0].stats.gets == 0)
            #expect(comparison.view().rows.contains { $0 == ["p99 of a get", "-", "-", "-"] })
        }
    }

    /// Live edits take a side (`B:L1`); without one they are refused in one line.
    @Test func liveEditsTakeASide() async throws {
        let comparison = try Self.comparison()
        await Self.withShutdown(comparison) {
            let refused = await comparison.execute(.setCapacity(level: "L1", capacity: .entries(5)))
            #expect(refused.isError)
            #expect(refused.message == "set-capacity: name the side in compare mode, e.g. set-capacity A:L1 64")
            let edited = await comparison.execute(.setCapacity(level: "b:L1", capacity: .entries(5)))
            #expect(!edited.isError && edited.message.hasPrefix("B: L1: count limit 100 → 5"), "\(edited.message)")
            #expect(comparison.a.currentPanes()[0].countLimit == 10 && comparison.b.currentPanes()[0].countLimit == 5)
            let unknown = await comparison.execute(.setPolicy(level: "A:L9", policy: .adaptive))
            #expect(unknown.isError && unknown.message.hasPrefix("A: set-policy: no level named 'L9'"), "\(unknown.message)")
            let save = await comparison.execute(.save(path: "x.yaml"))
            #expect(save.isError && save.message.contains("e.g. save B:b.yaml"))
        }
    }

    /// `clear A:L1` empties A's level only; a plain `clear L1` both.
    @Test func clearTakesASideOrActsOnBoth() async throws {
        let comparison = try Self.comparison()
        await Self.withShutdown(comparison) {
            for key in ["x", "y"] { _ = await comparison.execute(.get(key: key)) }
            await comparison.a.pipeline.cache.waitForPendingWrites()
            await comparison.b.pipeline.cache.waitForPendingWrites()
            _ = await comparison.execute(.clear(level: "A:L1"))
            #expect(comparison.a.currentPanes()[0].entries == 0 && comparison.b.currentPanes()[0].entries == 2)
            let both = await comparison.execute(.clear(level: "L1"))
            #expect(both.message == "A, B: cleared L1", "\(both.message)")
            #expect(comparison.b.currentPanes()[0].entries == 0)
        }
    }

    @Test func sidePrefixesAreParsedStrictly() {
        #expect(ComparisonModel.split("B:L1")! == (.b, "L1"))
        #expect(ComparisonModel.split("a:x:y")! == (.a, "x:y"))
        #expect(ComparisonModel.split("L1") == nil)
        #expect(ComparisonModel.split("C:L1") == nil)
        #expect(ComparisonModel.split("A:") == nil)
        #expect(ComparisonModel.split("AB:L1") == nil)
    }
}
