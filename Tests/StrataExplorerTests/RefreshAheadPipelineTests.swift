import Foundation
import Strata
import StrataTestSupport
@testable import StrataExplorer
import Testing

/// `refresh-ahead:` in a pipeline file: parsed with line-numbered errors,
/// built as loading gets through the origin, and shown: a hot key refreshed
/// ahead of expiry never misses, each refresh is one origin get and one set
/// in the level above, the path says so and the title counts them.
@Suite struct RefreshAheadPipelineTests {
    static let good = """
        name: ra
        refresh-ahead: 0.8
        levels:
          - name: L1
            kind: memory
            capacity: 1MiB
          - name: origin
            kind: origin
            ttl: 30s
        """

    static func error(_ text: String) -> String {
        do { _ = try PipelineFile.parse(text, file: "f.yaml"); return "no error" } catch { return "\(error)" }
    }

    @Test func aPipelineFileTakesRefreshAheadWithTheOriginsTTL() throws {
        let spec = try PipelineFile.parse(Self.good, file: "ra.yaml")
        #expect(spec.refreshAhead == 0.8)
        #expect(spec.loadTTL == .seconds(30))
        #expect(spec.tree.contains("what it loads is kept 30s"), "\(spec.tree)")
        #expect(spec.tree.hasSuffix("refresh ahead: gets load through origin, whose values are kept 30s; "
                                    + "a hit after 24s refreshes the key in the background"), "\(spec.tree)")
        // After the levels too; an http origin loads as well; `~` is off.
        let after = try PipelineFile.parse("""
            levels:
              - kind: memory
                capacity: 1MiB
              - kind: http
                base-url: http://127.0.0.1:1/
                ttl: 1m
            refresh-ahead: 0.5
            """, file: "after.yaml")
        #expect(after.refreshAhead == 0.5 && after.loadTTL == .seconds(60))
        let off = try PipelineFile.parse("refresh-ahead: ~\nlevels:\n  - kind: origin\n", file: "off.yaml")
        #expect(off.refreshAhead == nil && off.loadTTL == nil)
    }

    @Test(arguments: ["0", "1", "1.5", "-0.2", "soon", "80%", "[0.5]"])
    func aFractionOutsideZeroToOneIsRefusedWithItsLine(value: String) {
        let text = Self.good.replacingOccurrences(of: "refresh-ahead: 0.8", with: "refresh-ahead: \(value)")
        let shown = value == "[0.5]" ? "a list or mapping" : value
        #expect(Self.error(text) == "f.yaml:2: refresh-ahead: expected a fraction of the TTL between 0 and 1 such as 0.8, got \"\(shown)\"")
    }

    @Test func aPipelineRefreshAheadCannotLoadThroughIsRefusedWithItsLine() {
        // The last level stores: nothing to load from.
        #expect(Self.error("refresh-ahead: 0.8\nlevels:\n  - kind: memory\n    capacity: 1K\n")
            == "f.yaml:1: refresh-ahead: the last level loads the values: make it an origin or http level (it is a memory level)")
        // Only an origin: nothing keeps what it loads.
        #expect(Self.error("name: x\nrefresh-ahead: 0.8\nlevels:\n  - kind: origin\n    ttl: 5s\n")
            == "f.yaml:2: refresh-ahead: no level above the origin keeps what it loads: add one (memory, disk, redis)")
        // No TTL to refresh ahead of: the origin's line.
        #expect(Self.error(Self.good.replacingOccurrences(of: "    ttl: 30s\n", with: "").replacingOccurrences(of: "    ttl: 30s", with: ""))
            == "f.yaml:7: levels[1].ttl: missing: with refresh-ahead, the origin's ttl is how long each value it loads is kept (e.g. ttl: 30s)")
        #expect(Self.error(Self.good.replacingOccurrences(of: "ttl: 30s", with: "ttl: soon"))
            .hasPrefix("f.yaml:9: levels[1].ttl: expected a duration"))
        // Only the last level loads: an http level above it takes no ttl.
        #expect(Self.error(Self.good.replacingOccurrences(of: "levels:\n", with: "levels:\n  - name: web\n    kind: http\n    base-url: http://127.0.0.1:1/\n    ttl: 1m\n"))
            == "f.yaml:4: levels[0].ttl: only the last level loads under refresh-ahead: an http level above it takes no ttl")
        // Without refresh-ahead an origin takes no ttl, as before.
        #expect(Self.error(Self.good.replacingOccurrences(of: "refresh-ahead: 0.8\n", with: ""))
            == "f.yaml:8: levels[1].ttl: ttl applies to levels that store (memory, disk, redis), not to a origin origin"
                + " (with refresh-ahead, it is how long the values an origin loads are kept)")
        // A spec made in code is checked when it is built.
        let spec = PipelineSpec(name: "code", levels: [LevelSpec(name: "L1", kind: .memory(capacity: 1024, countLimit: nil))],
                                refreshAhead: 0.5)
        #expect(throws: PipelineFileError.self) { _ = try Pipeline(spec) }
        #expect(throws: PipelineFileError.self) { try Pipeline.validate(spec) }
    }

    @Test func refreshAheadIsSavedAndReadBack() throws {
        let spec = try PipelineFile.parse(Self.good, file: "ra.yaml")
        let text = PipelineWriter.yaml(spec)
        #expect(text.contains("\nrefresh-ahead: 0.8\n"), "\(text)")
        #expect(try PipelineFile.parse(text, file: "saved.yaml").sameConfiguration(as: spec))
        #expect(throws: ReloadPlan.Refusal.self) {
            var other = spec
            other.refreshAhead = 0.5
            _ = try ReloadPlan(running: spec, file: other, path: "ra.yaml")
        }
    }

    /// A hot key read every 50 ms under a 6 s TTL refreshed from a fifth of
    /// it: every get after the first hits L1, past the first value's
    /// deadline; each refresh is one origin get, and lands in L1 as one set.
    /// Wall clock (the pipeline's levels read the system clock): a refresh
    /// starts 1.2 s after a load and has 4.8 s to land, so only a stall that
    /// long (between two gets, or before the refresh's task runs) could miss.
    @Test func aHotKeyIsRefreshedAheadAndNeverMissesAtExpiry() async throws {
        let spec = PipelineSpec(name: "ra", levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 64 * 1024, countLimit: nil)),
            LevelSpec(name: "origin", kind: .origin(latency: .milliseconds(2), jitter: .zero, failureRate: 0, valueSize: 64),
                      ttl: .seconds(6)),
        ], refreshAhead: 0.2)
        let pipeline = try Pipeline(spec)
        let model = ExplorerModel(pipeline: pipeline)
        try await model.withShutdown {
            #expect(model.resilienceSummary == "refresh ahead 20%: 0 refreshes")
            let first = await model.execute(.get(key: "hot"))
            #expect(first.message.contains("from origin"), "\(first.message)")
            let started = ContinuousClock.now
            var (gets, last) = (0, started)
            // Past the first value's deadline, and two refreshes at least.
            let deadline = ContinuousClock.now + .seconds(60)
            while (pipeline.resilienceStatistics?.refreshesStarted ?? 0) < 2 || ContinuousClock.now - started < .seconds(7) {
                try #require(ContinuousClock.now < deadline, "no second refresh in 60 s")
                let answer = await model.execute(.get(key: "hot"))
                gets += 1
                let refreshes = pipeline.resilienceStatistics?.refreshesStarted ?? 0
                try #require(answer.message.contains("bytes from L1"),
                             "get \(gets) missed \(ContinuousClock.now - last) after the one before (\(refreshes) refreshes): \(answer.message)")
                last = ContinuousClock.now
                try await Task.sleep(for: .milliseconds(50))  // the workload's pace, not a wait for an event
            }
            await pipeline.cache.waitForPendingWrites()
            let statistics = try #require(pipeline.resilienceStatistics)
            let refreshes = statistics.refreshesStarted
            #expect(statistics.refreshesFailed == 0 && statistics.refreshesDropped == 0)
            let l1 = try #require(pipeline.level(named: "L1")).statistics.snapshot()
            let origin = try #require(pipeline.level(named: "origin")).statistics.snapshot()
            #expect(origin.gets == 1 + refreshes, "one origin get per refresh: \(origin.gets) for \(refreshes)")
            #expect(l1.sets == refreshes, "each refresh lands in L1 as a set: \(l1.sets) for \(refreshes)")
            #expect(l1.backfills == 1 && l1.misses == 1, "the first get's miss, then hits: \(l1.misses) misses")
            #expect(l1.hits == gets)
            #expect(model.resilienceSummary == "refresh ahead 20%: \(refreshes) refreshes")
            let lines = model.events.map(\.text).filter { $0.contains("refresh ahead started") }
            #expect(lines.count == refreshes, "\(model.events.prefix(5).map(\.text))")
            #expect(lines.allSatisfy { $0.hasPrefix("get hot  L1 hit") && $0.hasSuffix("→ refresh ahead started") }, "\(lines)")
            #expect(model.events.contains { $0.text.withoutLatencies.hasPrefix("get hot  L1 miss → origin hit") }, "one miss shown, not the look before loading")
        }
    }

    /// A disk level in a temporary directory of its own keeps the refreshed
    /// value (a set, its entry still there); one whose directory is named
    /// (perhaps shared) drops the key instead.
    @Test func aPrivateDiskLevelKeepsTheRefreshedValue() async throws {
        let named = NSTemporaryDirectory() + "strata-ra-disk-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: named) }
        let spec = PipelineSpec(name: "ra", levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 64 * 1024, countLimit: nil)),
            LevelSpec(name: "own", kind: .disk(path: nil, capacity: 1 << 20)),
            LevelSpec(name: "named", kind: .disk(path: named, capacity: 1 << 20)),
            LevelSpec(name: "origin", kind: .origin(latency: .zero, jitter: .zero, failureRate: 0, valueSize: 64),
                      ttl: .seconds(3600)),
        ], refreshAhead: 1e-9)
        let pipeline = try Pipeline(spec)
        let model = ExplorerModel(pipeline: pipeline)
        try await model.withShutdown {
            _ = await model.execute(.get(key: "k"))
            let hit = await model.execute(.get(key: "k"))
            #expect(hit.message.contains("from L1"), "\(hit.message)")
            await pipeline.cache.waitForPendingWrites()
            #expect(pipeline.resilienceStatistics?.refreshesStarted == 1)
            let own = try #require(pipeline.level(named: "own")), shared = try #require(pipeline.level(named: "named"))
            #expect(own.statistics.snapshot().sets == 1 && own.entries() == 1, "the refresh kept the key in the private directory")
            #expect(shared.entries() == 0, "a named directory may be shared: the key is dropped, not replaced")
        }
    }

    /// With `fail-safe:` too, both wrap the loading stack: a failing origin
    /// is answered stale, and the title shows both.
    @Test func failSafeAndRefreshAheadWrapTheSameStack() async throws {
        var spec = try PipelineFile.parse(Self.good.replacingOccurrences(of: "kind: origin", with: "kind: origin\n    failure-rate: 1"),
                                          file: "ra.yaml")
        spec.failSafe = FailSafeSpec(maxStale: .seconds(3600))
        let model = ExplorerModel(pipeline: try Pipeline(spec))
        await model.withShutdown {
            #expect(model.resilienceSummary == "fail-safe 1h: 0 stale · refresh ahead 80%: 0 refreshes")
            #expect(await !model.execute(.set(key: "k", value: "kept")).isError)
            #expect(await !model.execute(.clear(level: "L1")).isError)
            let answer = await model.execute(.get(key: "k"))
            #expect(!answer.isError && answer.message.hasSuffix("\"kept\""), "\(answer.message)")
            #expect(model.events.contains { $0.text.withoutLatencies.hasPrefix("get k  L1 miss → origin error") && $0.text.contains("answered stale (seen") },
                    "\(model.events.prefix(3).map(\.text))")
            #expect(model.resilienceSummary == "fail-safe 1h: 1 stale · refresh ahead 80%: 0 refreshes")
            #expect(await model.execute(.get(key: "never")).isError, "nothing to fall back on: the failure shows")
        }
    }

    /// A key the origin does not have is a miss through the loading get, as in a plain pipeline.
    @Test func aKeyTheOriginLacksIsNotFound() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(PipelineFile.parse(Self.good, file: "ra.yaml")))
        await model.withShutdown {
            let answer = await model.execute(.get(key: "missing:x"))
            #expect(!answer.isError && answer.message == "get missing:x: not found in any level", "\(answer.message)")
            #expect(await !model.execute(.set(key: "k", value: "mine")).isError)
            let mine = await model.execute(.get(key: "k"))
            #expect(mine.message.contains("from L1") && mine.message.hasSuffix("\"mine\""), "\(mine.message)")
        }
    }

    /// `strata check` prints the refresh; `strata run` honours it (the
    /// second get is an L1 hit that starts a refresh: the fraction is 3.6 µs of 1 h).
    @Test func checkAndRunHonourIt() async throws {
        let config = NSTemporaryDirectory() + "strata-ra-\(UUID().uuidString.prefix(8)).yaml"
        try Self.good.replacingOccurrences(of: "0.8", with: "0.000000001").replacingOccurrences(of: "30s", with: "1h")
            .write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let check = try await EndToEndTests.run(["check", config])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("refresh ahead: gets load through origin, whose values are kept 1h"), "\(check.stdout)")
        let run = try await EndToEndTests.run(["run", "--config", config], stdin: "get k\nget k\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("get k: 512 bytes from origin"), "\(run.stdout)")
        #expect(run.stdout.contains("get k: 512 bytes from L1"), "\(run.stdout)")
        #expect(run.stdout.hasSuffix("refresh ahead 1e-07%: 1 refresh\n"), "\(run.stdout)")
        let bad = NSTemporaryDirectory() + "strata-ra-bad-\(UUID().uuidString.prefix(8)).yaml"
        try Self.good.replacingOccurrences(of: "0.8", with: "2").write(toFile: bad, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: bad) }
        let refused = try await EndToEndTests.run(["check", bad])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("\(bad):2: refresh-ahead: expected a fraction"), "\(refused.stderr)")
    }

    /// `:export` writes the pipeline's fail-safe and refresh-ahead settings
    /// and figures beside the levels' (null without either).
    @Test func exportCarriesTheResilienceSettingsAndFigures() async throws {
        let directory = TemporaryDirectory("strata-export-resilience")
        defer { directory.remove() }
        let spec = PipelineSpec(name: "ra", levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 64 * 1024, countLimit: nil)),
            LevelSpec(name: "origin", kind: .origin(latency: .zero, jitter: .zero, failureRate: 0, valueSize: 64),
                      ttl: .seconds(30)),
        ], failSafe: FailSafeSpec(maxStale: .seconds(3600), softTimeout: .milliseconds(100)), refreshAhead: 0.8)
        let model = ExplorerModel(pipeline: try Pipeline(spec))
        try await model.withShutdown {
            _ = await model.execute(.get(key: "k"))
            let path = directory.url.path + "/ra.json"
            #expect(!(await model.execute(.export(path: path))).isError)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
            let resilience = try #require(object["resilience"] as? [String: Any], "\(object.keys)")
            #expect(resilience["maxStaleSeconds"] as? Double == 3600)
            #expect(resilience["softTimeoutSeconds"] as? Double == 0.1)
            #expect(resilience["hardTimeoutSeconds"] is NSNull)
            #expect(resilience["refreshAhead"] as? Double == 0.8)
            #expect(resilience["refreshesStarted"] as? Int == 0 && resilience["staleAnswers"] as? Int == 0)
            #expect((object["levels"] as? [[String: Any]])?.count == 2)
        }
        let plain = ExplorerModel(pipeline: try Pipeline(PipelineSpec(name: "plain", levels: spec.levels)))
        try await plain.withShutdown {
            let path = directory.url.path + "/plain.json"
            #expect(!(await plain.execute(.export(path: path))).isError)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
            #expect(object["resilience"] is NSNull)
        }
    }
}
