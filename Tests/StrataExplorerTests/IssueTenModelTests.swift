import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// Issue 10: model-level defects (workload statistics, pause in scripts,
/// reset under load, error text, honest outcomes).
@Suite struct IssueTenModelTests {
    static func spec(countLimit: Int = 100, originLatency: Duration = .milliseconds(1), valueSize: Int = 64,
                     policy: EvictionPolicy? = nil) -> PipelineSpec {
        PipelineSpec(name: "test", levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 1 << 20, countLimit: countLimit), policy: policy),
            LevelSpec(name: "origin", kind: .origin(latency: originLatency, jitter: .zero, failureRate: 0, valueSize: valueSize)),
        ])
    }

    // D4: 64 entries of LRU over 200 uniformly requested keys hit k/n = 32%.
    @Test func uniformLoadOnAnLRUHitsAboutCapacityOverKeys() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(Self.spec(countLimit: 64, originLatency: .zero, policy: .lru)))
        try await model.withShutdown {
            _ = await model.execute(.load(pattern: .uniform, keys: 200, rate: 5000, seconds: nil))
            let workload = try #require(model.workload)
            let deadline = ContinuousClock.now + .seconds(20)
            while model.panes()[0].stats.gets < 4000, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            workload.stop()
            await workload.finished()
            let l1 = model.panes()[0].stats
            #expect(l1.gets >= 4000)
            // The defect showed 52-71%, impossible for independent uniform
            // requests. Warm-up misses, concurrent misses for a key already being
            // fetched and back-fills still queued only lower the ratio (on a
            // starved machine it was seen at 0: no back-fill had landed), so the
            // bound that matters is the upper one; KeyGeneratorTests checks k/n
            // exactly on a simulated LRU.
            #expect(l1.hits + l1.misses + l1.errors == l1.gets, "every get answered")
            #expect(l1.hitRatio <= 0.37, "L1 hit ratio \(l1.hitRatio) over \(l1.gets) gets (\(l1.hits) hits, \(l1.misses) misses, \(l1.errors) errors); expected about 64/200")
        }
    }

    // D5: SECONDS is a time limit: a workload the pipeline cannot keep up with
    // still stops on time.
    @Test func loadSecondsIsATimeLimitNotACount() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(Self.spec(originLatency: .milliseconds(50))))
        try await model.withShutdown {
            // 50,000 gets are due in 0.5 s; 64 workers at 50 ms a get send about
            // 700 of them in that time. Read as a count, the load would run ~40 s.
            _ = await model.execute(.load(pattern: .uniform, keys: 1_000_000, rate: 100_000, seconds: 0.5))
            let workload = try #require(model.workload)
            let deadline = ContinuousClock.now + .seconds(20)
            while model.workload != nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(model.workload == nil, "the workload ended by itself")
            workload.stop()
            await workload.finished()
            #expect(workload.completed < 5_000, "\(workload.completed) gets sent after the time limit")
            #expect(workload.description.contains("(0s left)"))
        }
    }

    // D6: `pause` in a script freezes the screen's figures, not the final table.
    @Test func pauseInAScriptDoesNotFreezeTheFinalStatistics() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(Self.spec()))
        try await model.withShutdown {
            let runner = ScriptRunner(model: model, write: { _ in }, writeError: { _ in })
            _ = await runner.run(lines: ["get a", "pause", "get a", "get b"], source: "test")
            let l1 = try #require(runner.statisticsTable().components(separatedBy: "\n").first { $0.hasPrefix("L1 ") })
            // Columns are two or more spaces apart (the kind column has single spaces: "memory · lru").
            let columns = l1.split(separator: try Regex("  +"), omittingEmptySubsequences: true)
            #expect(columns.count > 4 && columns[2] == "3" && columns[3] == "1", "L1 row: \(l1)")
            #expect(runner.statisticsJSON().contains("\"gets\" : 3"))
        }
    }

    /// `strata run --json` names every figure with its unit, and every level has every key.
    @Test func statisticsJSONNamesUnits() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(Self.spec()))
        try await model.withShutdown {
            let runner = ScriptRunner(model: model, write: { _ in }, writeError: { _ in })
            _ = await runner.run(lines: (0..<40).map { "get k\($0 % 4)" }, source: "test")
            let object = try JSONSerialization.jsonObject(with: Data(runner.statisticsJSON().utf8)) as? [String: Any]
            let levels = try #require(object?["levels"] as? [[String: Any]])
            let expected: Set<String> = [
                "level", "kind", "gets", "hits", "misses", "errors", "hitRatio", "sets", "setErrors", "removes",
                "removeErrors", "invalidations", "clears", "memoryWarnings", "backfills", "backfillFailures", "getP50Nanoseconds",
                "getP99Nanoseconds", "entries", "countLimit", "bytes", "capacityBytes", "levelCounters", "lastError",
            ]
            for level in levels { #expect(Set(level.keys) == expected, "\(level.keys.sorted())") }
            let l1 = try #require(levels.first { $0["level"] as? String == "L1" })
            #expect(l1["gets"] as? Int == 40 && l1["hits"] as? Int == 36)
            #expect(l1["hitRatio"] as? Double == 0.9)
            #expect((l1["capacityBytes"] as? Int ?? 0) > 0 && (l1["bytes"] as? Int ?? 0) > 0)
            #expect(l1["getP50Nanoseconds"] is Int || l1["getP50Nanoseconds"] is NSNull)
            #expect(!runner.statisticsJSON().contains("\"getP50\""), "no unitless latency field")
        }
    }

    // D9: after a reset under load no level shows more answers than gets.
    @Test func resetUnderLoadKeepsCountersConsistent() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(Self.spec(originLatency: .milliseconds(300))))
        try await model.withShutdown {
            // One get every 500 ms, each in flight for 300 ms at the origin.
            _ = await model.execute(.load(pattern: .uniform, keys: 1_000_000, rate: 2, seconds: nil))
            let deadline = ContinuousClock.now + .seconds(5)
            while model.panes()[1].stats.gets == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            let workload = try #require(model.workload)
            let before = workload.completed  // the get at the origin is still in flight
            _ = await model.execute(.reset)
            // Poll (with a deadline) until that get has been answered.
            let answered = ContinuousClock.now + .seconds(5)
            while workload.completed <= before, ContinuousClock.now < answered { try await Task.sleep(for: .milliseconds(5)) }
            #expect(workload.completed > before)
            for pane in model.panes() {
                let s = pane.stats
                #expect(s.hits + s.misses + s.errors <= s.gets, "\(pane.name): gets \(s.gets) hits \(s.hits) misses \(s.misses)")
            }
            _ = await model.execute(.loadStop)
        }
    }

    // D10: an event-log error keeps its whole text; the screen clips it to its width.
    @Test func eventLogKeepsTheWholeErrorText() {
        let error = "connection refused while talking to redis://cache.internal:6379 (after 3 attempts, 1s apart)"
        let events = [CacheEvent(level: "redis", operation: .get, outcome: .error, key: "k", duration: .milliseconds(2),
                                 isBackfill: false, error: error)]
        #expect(ExplorerModel.path(events).contains(error))
    }

    // D11: `rm` of a key no level holds says so.
    @Test func removingAnAbsentKeyDoesNotClaimItWasRemoved() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(Self.spec()))
        await model.withShutdown {
            let absent = await model.execute(.remove(key: "nosuchkey"))
            #expect(!absent.message.contains("removed nosuchkey"), "\(absent.message)")
            #expect(absent.message.contains("not found"), "\(absent.message)")
            _ = await model.execute(.set(key: "k", value: "v"))
            let present = await model.execute(.remove(key: "k"))
            #expect(present.message.contains("removed k"), "\(present.message)")
        }
    }

    // D11: a second `load` says it replaced the first.
    @Test func secondLoadSaysItReplacedTheFirst() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(Self.spec()))
        await model.withShutdown {
            _ = await model.execute(.load(pattern: .zipf, keys: 10, rate: 10, seconds: nil))
            let second = await model.execute(.load(pattern: .loop, keys: 10, rate: 10, seconds: nil))
            #expect(second.message.contains("replaced"), "\(second.message)")
            #expect(model.events[0].text.contains("replaced") || model.events[1].text.contains("replaced"))
            _ = await model.execute(.loadStop)
        }
    }
}
