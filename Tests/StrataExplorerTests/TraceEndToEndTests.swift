import Foundation
import StrataSim
import StrataTestSupport
import Testing

/// Traces through the real `strata` binary: `strata run --replay` as a
/// subprocess, and recording then replaying on the real screen (tmux).
@Suite(.serialized) struct TraceEndToEndTests {
    typealias E2E = EndToEndTests

    @Test func runReplaysATraceAndPrintsTheStatistics() async throws {
        let config = try E2E.quickConfig()
        let directory = TemporaryDirectory("strata-run-replay")
        defer { try? FileManager.default.removeItem(atPath: config); directory.remove() }
        let trace = directory.path + "/t.trace"
        try """
        #strata-trace 1
        0 get a
        1 get a
        2 set b 100
        3 get b
        4 rm b
        5 get b
        """.write(toFile: trace, atomically: true, encoding: .utf8)
        let result = try await E2E.run(["run", "--config", config, "--replay", trace, "--speed", "max", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let levels = json?["levels"] as? [[String: Any]] ?? []
        let l1 = levels.first ?? [:]
        #expect(l1["gets"] as? Int == 4 && l1["hits"] as? Int == 2 && l1["sets"] as? Int == 1 && l1["removes"] as? Int == 1, "\(l1)")
        #expect(levels.last?["gets"] as? Int == 2, "the origin is asked for a, and for b once removed")

        let table = try await E2E.run(["run", "--config", config, "--replay", trace])
        #expect(table.status == 0)
        #expect(table.stdout.hasPrefix("> replay \(trace) 1\n  6 requests in "), "\(table.stdout)")
        #expect(table.stdout.contains("\nlevel "), "the statistics table follows")

        let bad = directory.path + "/bad.trace"
        try "#strata-trace 1\n0 get a\n0 get\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let failed = try await E2E.run(["run", "--config", config, "--replay", bad])
        #expect(failed.status == 1)
        #expect(failed.stderr == "strata: --replay: \(bad):3: malformed line: get takes a KEY, found 0 fields after it\n")
        let missing = try await E2E.run(["run", "--config", config, "--replay", directory.path + "/none.trace"])
        #expect(missing.status == 1 && missing.stderr.contains("none.trace: no such file"), "\(missing.stderr)")
        let speed = try await E2E.run(["run", "--config", config, "--replay", trace, "--speed", "fast"])
        #expect(speed.status == 2)
        #expect(speed.stderr.hasPrefix("strata: error: --speed: SPEED must be a multiplier"), "\(speed.stderr)")
    }

    /// `--compare`: the same trace against an LRU level of 2 entries and one
    /// of 3, over a loop of 3 keys: A never hits, B hits the second round.
    @Test func runComparesTwoPipelines() async throws {
        let directory = TemporaryDirectory("strata-compare")
        defer { directory.remove() }
        func pipeline(_ name: String, count: Int) throws -> String {
            let path = directory.path + "/\(name).yaml"
            try ComparisonModelTests.file(name, count: count).write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let a = try pipeline("small", count: 2), b = try pipeline("big", count: 3)
        let trace = directory.path + "/loop.trace"
        try "#strata-trace 1\n0 get a\n1 get b\n2 get c\n3 get a\n4 get b\n5 get c\n".write(toFile: trace, atomically: true, encoding: .utf8)
        let result = try await E2E.run(["run", "--config", a, "--compare", b, "--replay", trace, "--speed", "max"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(lines.first == ["A:", a, "gets", "hits", "hit%", "p99", "│", "B:", b, "gets", "hits", "hit%", "p99"], "\(result.stdout)")
        #expect(lines.contains { $0.prefix(4) == ["L1", "6", "0", "0.0"] && $0.dropFirst(5).prefix(5) == ["│", "L1", "6", "3", "50.0"] },
                "\(result.stdout)")
        #expect(lines.contains { $0 == ["hit", "ratio", "of", "L1", "/", "L1", "0.0%", "50.0%", "+50.0", "points"] }, "\(result.stdout)")
        #expect(lines.contains { $0 == ["served", "from", "cache", "0.0%", "50.0%", "+50.0", "points"] }, "\(result.stdout)")
        #expect(lines.contains { $0 == ["requests", "to", "origin", "/", "origin", "6", "3", "-3", "(-50.0%)"] }, "\(result.stdout)")
        #expect(lines.contains { $0.prefix(4) == ["p99", "of", "a", "get"] && $0.count == 7 }, "\(result.stdout)")

        let json = try await E2E.run(["run", "--config", a, "--compare", b, "--replay", trace, "--json"])
        let both = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: [String: Any]]
        #expect(both?["a"]?["pipeline"] as? String == "small" && both?["b"]?["pipeline"] as? String == "big", "\(json.stdout)")
        let missing = try await E2E.run(["run", "--config", a, "--compare", directory.path + "/none.yaml", "--replay", trace])
        #expect(missing.status == 2 && missing.stderr.hasPrefix("strata: error: \(directory.path)/none.yaml"), "\(missing.stderr)")
    }

    @Test func recordThenReplayOnTheScreen() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            Issue.record("tmux is not installed: run `make test` (scripts/setup.sh installs it)")
            return
        }
        let config = try E2E.quickConfig()
        let directory = TemporaryDirectory("strata-tmux-record")
        defer { try? FileManager.default.removeItem(atPath: config); directory.remove() }
        let trace = directory.path + "/s.trace"
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        try tmux("new-session", "-d", "-s", "ui", "-x", "120", "-y", "40",
                 "env TERM=xterm-256color LC_ALL=C.UTF-8 XDG_STATE_HOME=\(directory.path) \(E2E.binary) --config \(config); sleep 30")
        _ = await tmux.waitFor { $0.contains("events") && $0.contains("╭─ L1") }

        try tmux("send-keys", "-t", "ui", ":record \(trace)", "Enter")
        let recording = await tmux.waitFor { $0.contains("● REC s 0") }
        #expect(recording.contains("● REC s 0"), "the title shows the recording:\n\(recording)")
        try tmux("send-keys", "-t", "ui", ":get a", "Enter")
        _ = await tmux.waitFor { $0.contains("get a  L1 miss") }
        try tmux("send-keys", "-t", "ui", ":set b hello", "Enter")
        _ = await tmux.waitFor { $0.contains("set b (5 bytes)") }
        try tmux("send-keys", "-t", "ui", ":get a", "Enter")
        let three = await tmux.waitFor { $0.contains("● REC s 3") }
        #expect(three.contains("● REC s 3"), "\(three)")
        try tmux("send-keys", "-t", "ui", ":record stop", "Enter")
        let stopped = await tmux.waitFor { $0.contains("recorded 3 requests") }
        #expect(!stopped.contains("● REC"), "\(stopped)")
        let requests = try RecordedTrace.read(path: trace)
        #expect(requests.map(\.operation) == [.get(key: "a"), .set(key: "b", valueSize: 5), .get(key: "a")])

        try tmux("send-keys", "-t", "ui", ":reset", "Enter")
        _ = await tmux.waitFor { $0.contains("counters reset") }
        try tmux("send-keys", "-t", "ui", ":replay \(trace) max", "Enter")
        let replayed = await tmux.waitFor { $0.contains("replay s finished: 3 requests") }
        #expect(replayed.contains("replay s finished: 3 requests"), "\(replayed)")
        let l1 = E2E.pane("L1", in: replayed)
        #expect(l1.contains("gets 2  hits 2  misses 0"), "a was in L1 from the recording:\n\(l1)")
        #expect(l1.contains("sets 1"), "\(l1)")

        // Quitting while recording writes what was buffered.
        let quitTrace = directory.path + "/q.trace"
        try tmux("send-keys", "-t", "ui", ":record \(quitTrace)", "Enter")
        _ = await tmux.waitFor { $0.contains("● REC q 0") }
        try tmux("send-keys", "-t", "ui", ":get z", "Enter")
        _ = await tmux.waitFor { $0.contains("● REC q 1") }
        try tmux("send-keys", "-t", "ui", "q")
        _ = await tmux.waitFor { !$0.contains("events") }
        // The screen goes first; the model's shutdown then writes the buffer.
        let written = await TraceRecordReplayTests.eventually {
            (try? RecordedTrace.read(path: quitTrace).map(\.operation)) == [.get(key: "z")]
        }
        #expect(written, "\((try? String(contentsOfFile: quitTrace, encoding: .utf8)) ?? "no file")")
    }
}
