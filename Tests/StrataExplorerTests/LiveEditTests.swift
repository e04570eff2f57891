import Foundation
import Strata
@testable import StrataExplorer
import StrataTestSupport
import Testing

/// Live edits on a running pipeline: each applied, counters kept, the pane
/// showing the new setting, the log saying what changed; levels an edit does
/// not apply to refused in one line; reload, save and export.
@Suite struct LiveEditTests {
    static let file = """
    name: live
    levels:
      - name: L1
        kind: memory
        capacity: 64KiB
        count: 100
        policy: lru
      - name: L2
        kind: disk
        capacity: 1MiB
      - name: origin
        kind: origin
        latency: 0ms
        value-size: 100
    """

    static func model(_ text: String = file, readOnly: Bool = false) throws -> ExplorerModel {
        ExplorerModel(pipeline: try Pipeline(try PipelineFile.parse(text, file: "live.yaml"), readOnly: readOnly))
    }

    static func fill(_ model: ExplorerModel, _ keys: Int) async {
        for i in 0..<keys { _ = await model.execute(.get(key: "k\(i)")) }
    }

    @Test func setCapacityInEntriesResizesInPlaceAndKeepsTheCounters() async throws {
        let model = try Self.model()
        try await model.withShutdown {
            await Self.fill(model, 50)
            let gets = model.panes()[0].stats.gets
            let outcome = await model.execute(.setCapacity(level: "L1", capacity: .entries(10)))
            #expect(!outcome.isError)
            #expect(outcome.message.contains("count limit 100 → 10") && outcome.message.contains("40 evicted"), "\(outcome.message)")
            let pane = model.panes()[0]
            #expect(pane.countLimit == 10)
            #expect(pane.entries == 10)
            #expect(pane.stats.gets == gets)
            #expect(pane.stats.levelCounters?["evictions"] == 40)
            #expect(model.events.contains { $0.text.hasPrefix("L1: count limit 100 → 10") })
            // The most recent ten stay (LRU).
            let level = try #require(model.pipeline.level(named: "L1"))
            #expect((40..<50).allSatisfy { level.holds?("k\($0)") == true })
        }
    }

    @Test func setCapacityInBytesBoundsTheBytes() async throws {
        let model = try Self.model()
        await model.withShutdown {
            await Self.fill(model, 50)
            let outcome = await model.execute(.setCapacity(level: "L1", capacity: .bytes(1024)))
            #expect(outcome.message.contains("capacity 64.0 KiB → 1.0 KiB"), "\(outcome.message)")
            let pane = model.panes()[0]
            #expect(pane.capacity == 1024)
            #expect((pane.bytes ?? .max) <= 1024)
            #expect(pane.entries == 10)
            // Growing back evicts nothing and lets the level fill again.
            _ = await model.execute(.setCapacity(level: "L1", capacity: .bytes(64 * 1024)))
            await Self.fill(model, 50)
            #expect(model.panes()[0].entries == 50)
        }
    }

    @Test func setTTLRebuildsTheLevelAndNoValueOutlivesIt() async throws {
        let model = try Self.model()
        try await model.withShutdown {
            await Self.fill(model, 20)
            let gets = model.panes()[0].stats.gets
            let outcome = await model.execute(.setTTL(level: "L1", ttl: .milliseconds(300)))
            #expect(outcome.message.contains("ttl none → 300ms") && outcome.message.contains("20 entries re-inserted in recency order"),
                    "\(outcome.message)")
            let pane = model.panes()[0]
            #expect(pane.summary.contains("ttl 300ms"), "\(pane.summary)")
            #expect(pane.entries == 20)
            #expect(pane.stats.gets == gets)
            // The entries that never expired now do, within the new TTL.
            let level = try #require(model.pipeline.level(named: "L1"))
            #expect(level.holds?("k0") == true)
            #expect(await ExplorerInvalidationTests.poll { level.holds?("k0") == false })
        }
    }

    @Test func aLongerTTLDoesNotExtendAnEntrysDeadline() async throws {
        let model = try Self.model(Self.file.replacingOccurrences(of: "policy: lru", with: "policy: lru\n    ttl: 300ms"))
        try await model.withShutdown {
            _ = await model.execute(.get(key: "old"))
            _ = await model.execute(.setTTL(level: "L1", ttl: .seconds(3600)))
            #expect(model.panes()[0].summary.contains("ttl 1h"))
            let level = try #require(model.pipeline.level(named: "L1"))
            #expect(await ExplorerInvalidationTests.poll { level.holds?("old") == false })
            // New entries get the new TTL.
            _ = await model.execute(.get(key: "new"))
            try await Task.sleep(for: .milliseconds(400))  // past the old TTL: what is asserted is that it is still there
            #expect(level.holds?("new") == true)
        }
    }

    @Test func setPolicyRebuildsKeepingEntriesAndCounters() async throws {
        let model = try Self.model()
        await model.withShutdown {
            await Self.fill(model, 30)
            let outcome = await model.execute(.setPolicy(level: "L1", policy: .adaptive))
            #expect(outcome.message.contains("policy lru → adaptive") && outcome.message.contains("30 entries re-inserted"),
                    "\(outcome.message)")
            #expect(model.panes()[0].summary.hasPrefix("memory · adaptive"))
            #expect(model.panes()[0].configuration.contains("window "))
            #expect(model.panes()[0].entries == 30)
            #expect(model.panes()[0].stats.gets == 30)
            let again = await model.execute(.setPolicy(level: "L1", policy: .adaptive))
            #expect(again.isError && again.message.contains("L1 already has ttl none, policy adaptive"), "\(again.message)")
            // A get after the switch hits the rebuilt level.
            _ = await model.execute(.get(key: "k29"))
            #expect(model.panes()[0].stats.hits == 1)
        }
    }

    @Test func levelsAnEditDoesNotApplyToAreNamedInOneLine() async throws {
        let redisFile = """
        levels:
          - name: L1
            kind: memory
            capacity: 1KiB
          - name: shared
            kind: redis
            url: redis://127.0.0.1:1
          - name: origin
            kind: origin
        """
        let withRedis = try Self.model(redisFile)
        await withRedis.withShutdown {
            let cases: [(Command, String)] = [
                (.setCapacity(level: "shared", capacity: .bytes(1024)), "set-capacity: shared is a Redis level: its memory is the server's"),
                (.setPolicy(level: "shared", policy: .lru), "set-policy: shared is a Redis level: the server evicts"),
                (.setTTL(level: "origin", ttl: .seconds(1)), "set-ttl: origin is an origin (origin): it stores nothing, so has no TTL"),
                (.setCapacity(level: "nope", capacity: .entries(1)), "set-capacity: no level named 'nope' (levels: L1, shared, origin)"),
            ]
            for (command, message) in cases {
                let outcome = await withRedis.execute(command)
                #expect(outcome.isError && outcome.message.hasPrefix(message) && !outcome.message.contains("\n"), "\(outcome.message)")
            }
        }
        let disk = try Self.model()
        await disk.withShutdown {
            let outcome = await disk.execute(.setCapacity(level: "L2", capacity: .bytes(1024)))
            #expect(outcome.isError && outcome.message.contains("L2 is a disk level: its capacity is fixed while it runs"), "\(outcome.message)")
        }
    }

    // MARK: reload

    /// A model started from ``file`` written in a fresh directory, with the file's path.
    static func withFile(_ body: (ExplorerModel, String) async throws -> Void) async throws {
        let directory = TemporaryDirectory("strata-reload")
        defer { directory.remove() }
        let path = directory.url.path + "/p.yaml"
        try file.write(toFile: path, atomically: true, encoding: .utf8)
        let model = ExplorerModel(pipeline: try Pipeline(try PipelineFile.load(path: path)))
        try await model.withShutdown { try await body(model, path) }
    }

    @Test func reloadAppliesTheFilesLiveSettings() async throws {
        try await Self.withFile { model, path in
            await Self.fill(model, 40)
            #expect(await model.execute(.reload).message == "reload: \(path): no change to apply")
            try Self.file.replacingOccurrences(of: "count: 100", with: "count: 20").write(toFile: path, atomically: true, encoding: .utf8)
            let resized = await model.execute(.reload)
            #expect(!resized.isError, "\(resized.message)")
            #expect(model.panes()[0].countLimit == 20 && model.panes()[0].entries == 20)
            #expect(model.events.contains { $0.text.hasPrefix("reload: L1: capacity 64.0 KiB, count limit 20 (resized in place: 20 evicted") })
            try Self.file.replacingOccurrences(of: "policy: lru", with: "policy: adaptive\n    ttl: 5m")
                .write(toFile: path, atomically: true, encoding: .utf8)
            let rebuilt = await model.execute(.reload)
            #expect(!rebuilt.isError, "\(rebuilt.message)")
            #expect(model.panes()[0].summary.hasPrefix("memory · adaptive · ttl 5m"), "\(model.panes()[0].summary)")
            #expect(model.panes()[0].countLimit == 100)
            #expect(model.panes()[0].stats.gets == 40)
        }
    }

    @Test func reloadKeepsTheRunningPipelineOnABadFile() async throws {
        try await Self.withFile { model, path in
            try Self.file.replacingOccurrences(of: "count: 100", with: "count: many").write(toFile: path, atomically: true, encoding: .utf8)
            let bad = await model.execute(.reload)
            #expect(bad.isError && bad.message.hasPrefix("reload: \(path):6: levels[0].count: expected a whole number")
                    && bad.message.hasSuffix("(the running pipeline is kept)"), "\(bad.message)")
            try Self.file.replacingOccurrences(of: "capacity: 1MiB", with: "capacity: 2MiB").write(toFile: path, atomically: true, encoding: .utf8)
            let structural = await model.execute(.reload)
            #expect(structural.isError && structural.message.hasPrefix("reload: \(path):8: level L2: its disk settings changed")
                    && structural.message.contains("restart strata"), "\(structural.message)")
            try (Self.file + "\n  - name: extra\n    kind: memory\n    capacity: 1KiB\n").write(toFile: path, atomically: true, encoding: .utf8)
            #expect(await model.execute(.reload).isError)
            #expect(model.panes().map(\.name) == ["L1", "L2", "origin"])
            #expect(model.panes()[0].countLimit == 100)
        }
        let demo = ExplorerModel(pipeline: try Pipeline(.demo))
        await demo.withShutdown {
            let outcome = await demo.execute(.reload)
            #expect(outcome.isError && outcome.message.contains("started without a pipeline file"))
        }
    }

    // MARK: save and export

    @Test func saveWritesTheEditedPipelineAndItLoadsBack() async throws {
        let directory = TemporaryDirectory("strata-save")
        defer { directory.remove() }
        let path = directory.url.path + "/saved.yaml"
        let model = try Self.model()
        try await model.withShutdown {
            _ = await model.execute(.setCapacity(level: "L1", capacity: .entries(7)))
            _ = await model.execute(.setTTL(level: "L1", ttl: .seconds(45)))
            let outcome = await model.execute(.save(path: path))
            #expect(!outcome.isError, "\(outcome.message)")
            let saved = try PipelineFile.load(path: path)
            #expect(saved.sameConfiguration(as: model.pipeline.currentSpec))
            #expect(saved.levels[0].kind == .memory(capacity: 64 * 1024, countLimit: 7))
            #expect(saved.levels[0].ttl == .seconds(45))
            let failed = await model.execute(.save(path: directory.url.path + "/missing/dir/x.yaml"))
            #expect(failed.isError && failed.message.hasPrefix("save: cannot write ") && failed.message.contains("No such file"),
                    "\(failed.message)")
        }
    }

    @Test func exportWritesJSONAndCSV() async throws {
        let directory = TemporaryDirectory("strata-export")
        defer { directory.remove() }
        let model = try Self.model()
        try await model.withShutdown {
            await Self.fill(model, 12)
            _ = await model.execute(.setCapacity(level: "L1", capacity: .entries(5)))
            let json = directory.url.path + "/stats.json"
            #expect(!(await model.execute(.export(path: json))).isError)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: json))) as? [String: Any])
            #expect(object["pipeline"] as? String == "live")
            let levels = try #require(object["levels"] as? [[String: Any]])
            #expect(levels.map { $0["level"] as? String } == ["L1", "L2", "origin"])
            #expect(levels[0]["countLimit"] as? Int == 5)
            #expect(levels[0]["entries"] as? Int == 5)
            #expect(levels[0]["gets"] as? Int == 12)
            #expect(levels[0]["policy"] as? String == "lru")
            #expect(levels[0]["ttlSeconds"] is NSNull)
            #expect((levels[0]["levelCounters"] as? [String: Int])?["evictions"] == 7)
            #expect(levels[2]["policy"] is NSNull)
            let csv = directory.url.path + "/stats.csv"
            #expect(!(await model.execute(.export(path: csv))).isError)
            let lines = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == 4)
            let header = lines[0].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            #expect(header.first == "level" && header.contains("levelCounters.evictions") && header.contains("ttlSeconds"))
            let first = lines[1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            #expect(first.count == header.count)
            #expect(first[header.firstIndex(of: "countLimit")!] == "5")
            #expect(first[header.firstIndex(of: "levelCounters.evictions")!] == "7")
        }
    }

    @Test func csvCellsAreQuotedWhenTheyMustBe() {
        #expect(PipelineExport.cell("memory · lru") == "memory · lru")
        #expect(PipelineExport.cell("a,b") == "\"a,b\"")
        #expect(PipelineExport.cell("say \"hi\"") == "\"say \"\"hi\"\"\"")
    }
}
