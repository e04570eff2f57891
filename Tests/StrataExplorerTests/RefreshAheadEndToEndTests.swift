import Foundation
import Testing

/// `refresh-ahead:` in the real explorer (tmux): a get of a hot key past
/// a quarter of its TTL says in its path that a refresh started, the title counts
/// it, and the refreshed value's landing is L1's set.
@Suite(.serialized) struct RefreshAheadEndToEndTests {
    @Test func aRefreshShowsInThePathTheTitleAndTheSets() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            Issue.record("tmux is not installed: run `make test` (scripts/setup.sh installs it)")
            return
        }
        let config = NSTemporaryDirectory() + "strata-ra-ui-\(UUID().uuidString.prefix(8)).yaml"
        try RefreshAheadPipelineTests.good.replacingOccurrences(of: "0.8", with: "0.25")
            .replacingOccurrences(of: "ttl: 30s", with: "latency: 5ms\n    ttl: 4s")
            .write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let tmux = EndToEndTests.Tmux()
        defer { _ = try? tmux("kill-server") }
        try tmux("new-session", "-d", "-s", "ui", "-x", "140", "-y", "40",
                 "env TERM=xterm-256color LC_ALL=C.UTF-8 \(EndToEndTests.binary) --config \(config); sleep 30")
        let ready = await tmux.waitFor { $0.contains("events") && $0.contains("╭─ L1") }
        #expect(ready.contains("refresh ahead 25%: 0 refreshes"), "screen:\n\(ready)")

        try tmux("send-keys", "-t", "ui", ":get hot", "Enter")
        let loaded = await tmux.waitFor { $0.withoutLatencies.contains("get hot  L1 miss → origin hit") }
        #expect(loaded.withoutLatencies.contains("get hot  L1 miss → origin hit"), "screen:\n\(loaded)")
        // Gets of the hot key until one comes after a quarter of its TTL (1 s): a
        // poll, each get answered before the next is typed.
        let deadline = Date().addingTimeInterval(60)
        var screen = loaded
        while Date() < deadline && !screen.contains("refresh ahead started") {
            try tmux("send-keys", "-t", "ui", ":get hot", "Enter")
            screen = await tmux.waitFor(1) { $0.contains("refresh ahead started") }
        }
        #expect(screen.contains("get hot  L1 hit"), "screen:\n\(screen)")
        #expect(screen.contains("→ refresh ahead started"), "screen:\n\(screen)")
        // The refresh lands (one origin get more) and the title counts it:
        // all in one capture (one can land between the rows of a paint).
        let landed = await tmux.waitFor {
            $0.contains("refresh ahead 25%: 1 refresh") && EndToEndTests.pane("L1", in: $0).contains("sets 1 ")
                && EndToEndTests.pane("origin", in: $0).contains("gets 2 ")
        }
        #expect(landed.contains("refresh ahead 25%: 1 refresh") && !landed.contains("refreshes"), "screen:\n\(landed)")
        #expect(EndToEndTests.pane("L1", in: landed).contains("sets 1 "), "screen:\n\(landed)")
        #expect(EndToEndTests.pane("origin", in: landed).contains("gets 2 "), "screen:\n\(landed)")

        try tmux("send-keys", "-t", "ui", "q")
        let gone = await tmux.waitFor { !$0.contains("events") }
        #expect(!gone.contains("╭─ L1"), "the explorer left and gave the terminal back")
    }
}
