import Foundation
import StrataTestSupport
import Testing

/// Two `strata` processes on one pipeline file with a Redis level (the README's
/// demo): a `:set` in one drops the key from the other's memory level, live.
@Suite struct TwoExplorersTests {
    typealias Tmux = EndToEndTests.Tmux

    static func screen(_ tmux: Tmux, _ session: String) -> String {
        (try? tmux("capture-pane", "-p", "-t", session)) ?? ""
    }

    /// Polls a session's screen until `condition` holds or 20 s pass.
    static func waitFor(_ tmux: Tmux, _ session: String, _ condition: (String) -> Bool) async -> String {
        let deadline = ContinuousClock.now + .seconds(20)
        var last = screen(tmux, session)
        while !condition(last), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
            last = screen(tmux, session)
        }
        return last
    }

    @Test func aSetInOneExplorerInvalidatesTheOthersMemoryLevel() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            Issue.record("tmux is not installed: run `make test` (scripts/setup.sh installs it)")
            return
        }
        let server = try await RedisServer()
        let config = NSTemporaryDirectory() + "strata-two-\(UUID().uuidString.prefix(8)).yaml"
        try """
        name: two
        levels:
          - name: L1
            kind: memory
            capacity: 256KiB
          - name: redis
            kind: redis
            url: \(server.url)/0
            prefix: "two:"
          - name: origin
            kind: origin
            latency: 1ms
        """.write(toFile: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let tmux = Tmux()
        defer { _ = try? tmux("kill-server") }
        for session in ["a", "b"] {
            try tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40",
                     "env TERM=xterm-256color LC_ALL=C.UTF-8 \(EndToEndTests.binary) --config \(config); sleep 30")
            _ = await Self.waitFor(tmux, session) { $0.contains("events") && $0.contains("╭─ L1") }
        }
        try tmux("send-keys", "-t", "a", ":get user:7", "Enter")
        _ = await Self.waitFor(tmux, "a") { $0.contains("back-filled") }
        try tmux("send-keys", "-t", "b", ":get user:7", "Enter")
        let bRead = await Self.waitFor(tmux, "b") { EndToEndTests.pane("L1", in: $0).contains("entries 1") }
        #expect(EndToEndTests.pane("L1", in: bRead).contains("entries 1"), "b:\n\(bRead)")
        // a's back-fill into Redis (a script, which Redis reports back to its
        // writer despite NOLOOP) is known as a's own: a keeps the key.
        let aKept = Self.screen(tmux, "a")
        #expect(!aKept.contains("invalidated user:7") && EndToEndTests.pane("L1", in: aKept).contains("entries 1"), "a:\n\(aKept)")

        // (a's back-fill into Redis may already have been reported to b.)
        func invalidations(_ screen: String) -> Int {
            screen.components(separatedBy: "invalidated user:7 (by another client, via redis)").count - 1
        }
        let before = invalidations(bRead)
        try tmux("send-keys", "-t", "a", ":set user:7 fresh", "Enter")
        let bAfter = await Self.waitFor(tmux, "b") {
            invalidations($0) > before && EndToEndTests.pane("L1", in: $0).contains("entries 0")
        }
        #expect(bAfter.contains("invalidated user:7 (by another client, via redis)"), "b:\n\(bAfter)")
        #expect(EndToEndTests.pane("L1", in: bAfter).contains("entries 0"), "b:\n\(bAfter)")
        let bCounts = await Self.waitFor(tmux, "b") { $0.contains("invalidations \(invalidations(bAfter))") }
        #expect(bCounts.contains("╭─ redis · invalidations \(invalidations(bAfter)) · flushes "), "b:\n\(bCounts)")
        // Redis does not report a's own write back to a (NOLOOP): a keeps
        // what it wrote, and its log has no invalidation. (Redis sent b's
        // report; one to a would have gone at the same time.)
        let aAfter = await Self.waitFor(tmux, "a") { $0.contains("written to every level") }
        #expect(!aAfter.contains("invalidated user:7 (by another client"), "a:\n\(aAfter)")
        #expect(EndToEndTests.pane("L1", in: aAfter).contains("entries 1"), "a kept its own write:\n\(aAfter)")
        try tmux("send-keys", "-t", "b", ":get user:7", "Enter")
        let bFresh = await Self.waitFor(tmux, "b") { $0.contains("\"fresh\"") }
        #expect(bFresh.contains("\"fresh\""), "b:\n\(bFresh)")
        for session in ["a", "b"] { try tmux("send-keys", "-t", session, "q") }
        await server.kill()
    }
}
