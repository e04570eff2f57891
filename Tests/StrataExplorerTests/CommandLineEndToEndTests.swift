import Foundation
import Testing

/// Issue 10, item 4 on the real screen (tmux): editing, completion, history
/// kept across runs.
@Suite(.serialized) struct CommandLineEndToEndTests {
    typealias E2E = EndToEndTests

    @Test func editingCompletionAndHistoryAcrossRuns() async throws {
        let config = try E2E.quickConfig()
        let state = NSTemporaryDirectory() + "strata-state-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: config); try? FileManager.default.removeItem(atPath: state) }
        let command = "env TERM=xterm-256color LC_ALL=C.UTF-8 XDG_STATE_HOME=\(state) \(E2E.binary) --config \(config)"
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }

        try tmux("new-session", "-d", "-s", "ui", "-x", "120", "-y", "40", command + "; sleep 30")
        _ = await tmux.waitFor { $0.contains("events") }
        // Tab completes the command and the toggle name.
        try tmux("send-keys", "-t", "ui", ":tog", "Tab", "mem", "Tab")
        let completed = await tmux.waitFor { $0.contains(":toggle memory █") }
        #expect(completed.contains(":toggle memory █"), "completed:\n\(completed)")
        try tmux("send-keys", "-t", "ui", "Enter")
        let toggled = await tmux.waitFor { $0.contains("[1 OFF]") && $0.contains("memory is off") }
        #expect(toggled.contains("memory is off"), "ran:\n\(toggled)")
        // ← moves the cursor: `get ac`, ←, `b` is `get abc`.
        try tmux("send-keys", "-t", "ui", ":get ac", "Left", "b", "Enter")
        let edited = await tmux.waitFor { $0.contains("get abc  ") }
        #expect(edited.contains("get abc  "), "inserted before the cursor:\n\(edited)")
        try tmux("send-keys", "-t", "ui", "q")
        _ = await tmux.waitFor { !$0.contains("events") }

        // A second run finds both commands with ↑.
        // The same pane runs it again: killing the only session ends the tmux
        // server, and a new session made at once could reach the dying one.
        try tmux("respawn-pane", "-k", "-t", "ui", command + "; sleep 30")
        _ = await tmux.waitFor { $0.contains("events") }
        try tmux("send-keys", "-t", "ui", ":", "Up")
        let last = await tmux.waitFor { $0.contains(":get abc█") }
        #expect(last.contains(":get abc█"), "history from the last run:\n\(last)")
        try tmux("send-keys", "-t", "ui", "Up")
        let earlier = await tmux.waitFor { $0.contains(":toggle memory█") }
        #expect(earlier.contains(":toggle memory█"), "\(earlier)")
        try tmux("send-keys", "-t", "ui", "Escape", "q")
    }
}
