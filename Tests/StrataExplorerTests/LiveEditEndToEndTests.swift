import Foundation
import Testing

/// The live edits in the real `strata`: a capacity and a TTL changed in a
/// running explorer (tmux), and `--readonly` refusing writes in script mode.
@Suite(.serialized) struct LiveEditEndToEndTests {
    static func config() throws -> String {
        let path = NSTemporaryDirectory() + "strata-live-\(UUID().uuidString.prefix(8)).yaml"
        try LiveEditTests.file.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aCapacityAndATTLEditedLiveShowInThePane() async throws {
        let config = try Self.config()
        defer { try? FileManager.default.removeItem(atPath: config) }
        guard case let (tmux, ready)? = try await EndToEndTests.launch("--config \(config)", width: 140,
                                                                 ready: { $0.contains("events") && $0.contains("╭─ L1") })
        else { return }
        defer { _ = try? tmux("kill-server") }
        #expect(ready.contains("strata · live"), "screen:\n\(ready)")

        // 40 keys in L1, then a limit of 10.
        try tmux("send-keys", "-t", "ui", ":load loop 40 400 1", "Enter")
        let filled = await tmux.waitFor(60) { EndToEndTests.pane("L1", in: $0).contains("entries 40/100") }
        #expect(EndToEndTests.pane("L1", in: filled).contains("entries 40/100"), "screen:\n\(filled)")
        let idle = await tmux.waitFor(30) { $0.contains("load finished") }
        let counts = Self.counts(EndToEndTests.pane("L1", in: idle))
        #expect(counts != nil, "screen:\n\(idle)")

        try tmux("send-keys", "-t", "ui", ":set-capacity L1 10", "Enter")
        // Both in one capture (one can land between the rows of a paint).
        let resized = await tmux.waitFor {
            EndToEndTests.pane("L1", in: $0).contains("entries 10/10") && $0.contains("L1: count limit 100 → 10")
        }
        #expect(EndToEndTests.pane("L1", in: resized).contains("entries 10/10"), "screen:\n\(resized)")
        #expect(resized.contains("L1: count limit 100 → 10 (resized in place: 30 evicted"), "screen:\n\(resized)")
        // The counters stayed.
        #expect(Self.counts(EndToEndTests.pane("L1", in: resized)) == counts, "screen:\n\(resized)")

        try tmux("send-keys", "-t", "ui", ":set-ttl L1 5m", "Enter")
        let ttl = await tmux.waitFor { $0.contains("╭─ L1 · memory · lru · ttl 5m") && $0.contains("L1: ttl none → 5m") }
        #expect(ttl.contains("╭─ L1 · memory · lru · ttl 5m"), "screen:\n\(ttl)")
        #expect(ttl.contains("L1: ttl none → 5m (rebuilt: 10 entries re-inserted"), "screen:\n\(ttl)")
        #expect(EndToEndTests.pane("L1", in: ttl).contains("entries 10/10"), "screen:\n\(ttl)")

        try tmux("send-keys", "-t", "ui", ":set-capacity origin 10", "Enter")
        let refused = await tmux.waitFor { $0.contains("it stores nothing") }
        #expect(refused.contains("set-capacity: origin is an origin (origin): it stores nothing, so has no capacity"), "screen:\n\(refused)")

        try tmux("send-keys", "-t", "ui", "q")
        let gone = await tmux.waitFor { !$0.contains("events") }
        #expect(!gone.contains("╭─ L1"), "the explorer left and gave the terminal back")
    }

    /// `gets 400  hits 360  misses 40` from a pane.
    static func counts(_ pane: String) -> String? {
        pane.firstMatch(of: /gets \S+  hits \S+  misses \S+/).map { String($0.output) }
    }

    /// `strata run --readonly`: writes and edits refused in one line each
    /// (exit status 1), gets and export run.
    @Test func readOnlyRefusesWritesAndEditsInScriptMode() async throws {
        let config = try Self.config()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let export = NSTemporaryDirectory() + "strata-live-\(UUID().uuidString.prefix(8)).json"
        defer { try? FileManager.default.removeItem(atPath: export) }
        let script = "get k1\nset k1 v\nrm k1\nclear\nwarn\nset-capacity L1 5\nset-ttl L1 1s\nset-policy L1 adaptive\nreload\nexport \(export)\n"
        let result = try await EndToEndTests.run(["run", "--readonly", "--config", config], stdin: script)
        #expect(result.status == 1)
        let refusals = result.stderr.split(separator: "\n").filter { $0.contains("read-only: ") }
        #expect(refusals.count == 8, "stderr:\n\(result.stderr)")
        #expect(result.stderr.contains("stdin:2: read-only: set writes to the levels (strata was started with --readonly)"))
        #expect(result.stderr.contains("stdin:6: read-only: set-capacity changes L1's configuration"))
        #expect(!result.stderr.contains("stdin:1:") && !result.stderr.contains("stdin:10:"), "stderr:\n\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: export))
    }
}
