import Foundation
import Testing

/// The key inspector on a real terminal (tmux, 80x24) over the demo
/// pipeline: open it on L1, filter with `/` as you type, preview a key.
@Suite(.serialized) struct InspectorEndToEndTests {
    typealias E2E = EndToEndTests

    @Test func openFilterPreviewAndGoBackAt80x24() async throws {
        let config = NSTemporaryDirectory() + "strata-config-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        try tmux("new-session", "-d", "-s", "ui", "-x", "80", "-y", "24",
                 "env TERM=xterm-256color LC_ALL=C.UTF-8 STRATA_CONFIG_DIR=\(config) XDG_STATE_HOME=\(config) \(E2E.binary); sleep 30")
        _ = await tmux.waitFor { $0.contains("events") }
        try tmux("send-keys", "-t", "ui", ":set user:7 hello inspector", "Enter")
        _ = await tmux.waitFor { $0.contains("set user:7") }
        try tmux("send-keys", "-t", "ui", ":set other:1 x", "Enter")
        _ = await tmux.waitFor { $0.contains("set other:1") }

        // Tab focuses L1; Enter opens its inspector with both keys.
        try tmux("send-keys", "-t", "ui", "Tab")
        _ = await tmux.waitFor { $0.contains("╔═ L1 ") }
        try tmux("send-keys", "-t", "ui", "Enter")
        let table = await tmux.waitFor { $0.contains("keys · L1 · 2") && $0.contains("user:7") && $0.contains("other:1") }
        #expect(table.contains("keys · L1 · 2") && table.contains("user:7") && table.contains("other:1"), "\(table)")
        #expect(table.contains("freq↓") && table.contains("ttl left"), "\(table)")

        // / narrows the list as each character is typed.
        try tmux("send-keys", "-t", "ui", "/", "u", "s")
        // (The hot keys line is the level's, whatever the filter: only the table's rows are checked.)
        let filtered = await tmux.waitFor { $0.contains("1 of 2") }
        #expect(filtered.contains("1 of 2") && filtered.contains("/us"), "\(filtered)")
        #expect(filtered.contains("║›user:7") && !filtered.contains("║ other:1") && !filtered.contains("║›other:1"), "\(filtered)")

        // Enter keeps the filter, Enter again previews the key: value, holders.
        try tmux("send-keys", "-t", "ui", "Enter", "Enter")
        let preview = await tmux.waitFor { $0.contains("hello inspector") }
        #expect(preview.contains("L1 · user:7") && preview.contains("hello inspector"), "\(preview)")
        #expect(preview.contains("held by L1, L2") && preview.contains("not asked: origin"), "\(preview)")
        #expect(preview.contains("expires never"), "L1 has no TTL:\n\(preview)")

        // Esc: the preview closes, then the filter clears, then the inspector closes.
        try tmux("send-keys", "-t", "ui", "Escape")
        _ = await tmux.waitFor { !$0.contains("hello inspector") }
        try tmux("send-keys", "-t", "ui", "Escape")
        let cleared = await tmux.waitFor { $0.contains("keys · L1 · 2 · sort") }
        #expect(cleared.contains("keys · L1 · 2 · sort") && !cleared.contains("/us"), "\(cleared)")
        #expect(cleared.contains("║ other:1") || cleared.contains("║›other:1"), "\(cleared)")
        try tmux("send-keys", "-t", "ui", "Escape")
        let back = await tmux.waitFor { $0.contains("events newest first") }
        #expect(back.contains("events newest first") && !back.contains("keys · L1"), "\(back)")
        try tmux("send-keys", "-t", "ui", "q")
    }
}
