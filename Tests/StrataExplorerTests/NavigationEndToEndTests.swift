import Foundation
import Testing

/// Issue 10, items 1 and 2 on the real screen (tmux): focus, zoom, scrolling
/// and filtering the event log, an entry's detail.
@Suite(.serialized) struct NavigationEndToEndTests {
    typealias E2E = EndToEndTests

    @Test func focusZoomScrollFilterAndDetail() async throws {
        let config = try E2E.quickConfig()
        let state = NSTemporaryDirectory() + "strata-state-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: config); try? FileManager.default.removeItem(atPath: state) }
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        try tmux("new-session", "-d", "-s", "ui", "-x", "100", "-y", "34",
                 "env TERM=xterm-256color LC_ALL=C.UTF-8 XDG_STATE_HOME=\(state) \(E2E.binary) --config \(config); sleep 30")
        _ = await tmux.waitFor { $0.contains("events") }

        // Thirty gets, one of them for a key to find again.
        for n in 1...30 { try tmux("send-keys", "-t", "ui", ":get k\(n)", "Enter") }
        try tmux("send-keys", "-t", "ui", ":get needle", "Enter")
        _ = await tmux.waitFor { $0.contains("get needle  L1 miss") }

        // Tab focuses L1 (double lines), Tab again L2; c asks to clear L2.
        try tmux("send-keys", "-t", "ui", "Tab")
        let l1 = await tmux.waitFor { $0.contains("╔═ L1 ") }
        #expect(l1.contains("╔═ L1 ") && !l1.contains("╔═ L2 "), "L1 focused:\n\(l1)")
        try tmux("send-keys", "-t", "ui", "Tab", "c")
        let clear = await tmux.waitFor { $0.contains(":clear L2█") }
        #expect(clear.contains("╔═ L2 ") && clear.contains(":clear L2█"), "\(clear)")
        try tmux("send-keys", "-t", "ui", "Escape")

        // z zooms the focused level: the others leave the screen.
        try tmux("send-keys", "-t", "ui", "z")
        let zoomed = await tmux.waitFor { !$0.contains("─ L1 ") && $0.contains("╔═ L2 ") }
        #expect(!zoomed.contains("─ L1 ") && !zoomed.contains("─ origin "), "zoomed on L2:\n\(zoomed)")
        try tmux("send-keys", "-t", "ui", "z")

        // PgDn gives the log focus and scrolls to older events.
        try tmux("send-keys", "-t", "ui", "PageDown", "PageDown")
        let scrolled = await tmux.waitFor { $0.contains("21/") }
        #expect(scrolled.contains("╔═ events"), "the log has focus:\n\(scrolled)")
        #expect(scrolled.contains("21/") && scrolled.contains("newer"), "scrolled to the 21st newest:\n\(scrolled)")

        // / filters; Enter opens the entry's detail; Esc closes it, Esc clears the filter.
        try tmux("send-keys", "-t", "ui", "/needle", "Enter")
        let filtered = await tmux.waitFor { $0.contains("/needle 1 of") }
        #expect(filtered.contains("/needle 1 of"), "\(filtered)")
        #expect(!filtered.contains("get k1  "), "other events are filtered out:\n\(filtered)")
        try tmux("send-keys", "-t", "ui", "Enter")
        let detail = await tmux.waitFor { $0.contains("Esc closes") }
        #expect(detail.contains("─ event ") && detail.contains("get needle  L1 miss"), "\(detail)")
        try tmux("send-keys", "-t", "ui", "Escape")
        _ = await tmux.waitFor { !$0.contains("Esc closes") }
        try tmux("send-keys", "-t", "ui", "Escape")
        // Both polled: a capture can fall between the title's cells and the log's.
        let unfiltered = await tmux.waitFor { !$0.contains("/needle") && $0.contains("get k30  ") }
        #expect(unfiltered.contains("get k30  "), "the filter is gone:\n\(unfiltered)")
        try tmux("send-keys", "-t", "ui", "q")
    }

    // Item 6: a click (an SGR mouse report, as a terminal sends it) focuses the
    // pane under it; the wheel scrolls the log; --no-mouse leaves them alone.
    @Test func clickFocusesAPaneAndTheWheelScrollsTheLog() async throws {
        let config = try E2E.quickConfig()
        let state = NSTemporaryDirectory() + "strata-state-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: config); try? FileManager.default.removeItem(atPath: state) }
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        let command = "env TERM=xterm-256color LC_ALL=C.UTF-8 XDG_STATE_HOME=\(state) \(E2E.binary) --config \(config)"
        try tmux("new-session", "-d", "-s", "ui", "-x", "100", "-y", "34", command + "; sleep 30")
        _ = await tmux.waitFor { $0.contains("events") }
        try tmux("send-keys", "-t", "ui", ":load loop 20 50", "Enter")
        _ = await tmux.waitFor { (Self.gets("L1", in: $0) ?? 0) > 0 }
        // Row 9, column 11 (1-based) is inside L2's pane (rows 7-11).
        try tmux("send-keys", "-t", "ui", "-l", "\u{1B}[<0;11;9M")
        try tmux("send-keys", "-t", "ui", "-l", "\u{1B}[<0;11;9m")
        let clicked = await tmux.waitFor { $0.contains("╔═ L2 ") }
        #expect(clicked.contains("╔═ L2 "), "L2 focused by the click:\n\(clicked)")
        // The release that ends the click leaves the explorer running: the
        // workload's figures keep coming with no key pressed after it (ncurses
        // read on, blocking, after a release outside its mouse mask: no frame
        // until the next key).
        let before = Self.gets("L1", in: clicked) ?? 0
        let later = await tmux.waitFor(30) { (Self.gets("L1", in: $0) ?? 0) >= before + 20 }
        #expect((Self.gets("L1", in: later) ?? 0) >= before + 20, "L1's gets went on from \(before):\n\(later)")
        try tmux("send-keys", "-t", "ui", "-l", "\u{1B}[<65;11;25M")
        let wheeled = await tmux.waitFor { $0.contains("╔═ events") }
        #expect(wheeled.contains("╔═ events") && !wheeled.contains("╔═ L2 "), "the wheel moved to the log:\n\(wheeled)")
        // A press and its release in one write (ncurses reads them together
        // and reports a click): row 3 is inside L1's pane.
        try tmux("send-keys", "-t", "ui", "-l", "\u{1B}[<0;11;3M\u{1B}[<0;11;3m")
        let clickedL1 = await tmux.waitFor(30) { $0.contains("╔═ L1 ") }
        #expect(clickedL1.contains("╔═ L1 ") && !clickedL1.contains("╔═ events"), "L1 focused by the click:\n\(clickedL1)")
        try tmux("send-keys", "-t", "ui", "q")
        _ = await tmux.waitFor { !$0.contains("events") }

        // The same pane runs it again (a new session after killing the only
        // one could reach the tmux server while it exits).
        try tmux("respawn-pane", "-k", "-t", "ui", command + " --no-mouse; sleep 30")
        _ = await tmux.waitFor { $0.contains("events") }
        try tmux("send-keys", "-t", "ui", "-l", "\u{1B}[<0;11;9M")
        try tmux("send-keys", "-t", "ui", ":get after-click", "Enter")
        let ignored = await tmux.waitFor { $0.contains("get after-click") }
        #expect(!ignored.contains("╔═"), "no pane focused with --no-mouse:\n\(ignored)")
        try tmux("send-keys", "-t", "ui", "Escape", "q")
    }

    /// The gets `level`'s pane shows (its border plain or focused).
    static func gets(_ level: String, in screen: String) -> Int? {
        let lines = screen.components(separatedBy: "\n")
        guard let top = lines.firstIndex(where: { $0.hasPrefix("╭─ \(level) ") || $0.hasPrefix("╔═ \(level) ") }),
              top + 1 < lines.count, let match = lines[top + 1].firstMatch(of: /gets (\d+)/) else { return nil }
        return Int(match.output.1)
    }
}
