import Foundation
import StrataTestSupport
import Testing

/// `strata --config a.yaml --compare b.yaml` in a real terminal (tmux): one
/// workload against an LRU L1 of 10 entries and one of 100, both sides and
/// the comparison strip on screen, a side-less live edit refused, a sided
/// one applied, B's L1 focused and inspected (keys, then clicks, reach
/// side B), and the terminal given back on `q`.
@Suite(.serialized) struct CompareEndToEndTests {
    @Test func bothSidesAndTheStripInTmux() async throws {
        let directory = TemporaryDirectory("strata-compare-tmux")
        defer { directory.remove() }
        let a = directory.path + "/a.yaml", b = directory.path + "/b.yaml"
        try ComparisonModelTests.file("small", count: 10).write(toFile: a, atomically: true, encoding: .utf8)
        try ComparisonModelTests.file("big", count: 100).write(toFile: b, atomically: true, encoding: .utf8)
        guard case let (tmux, ready)? = try await EndToEndTests.launch("--config \(a) --compare \(b)", width: 160, height: 48,
                                                                       ready: { $0.contains("comparison") })
        else { return }
        defer { _ = try? tmux("kill-server") }
        #expect(ready.contains("strata · A: \(a)  vs  B: \(b)"), "screen:\n\(ready)")

        // A loop of 20 keys: never a hit in 10 entries; in 100, every get after
        // the first round (50/s: one worker, so each side gets the keys in order).
        try tmux("send-keys", "-t", "ui", ":load loop 20 50", "Enter")
        _ = await tmux.waitFor(60) { (Self.l1(in: $0)?.aGets ?? 0) >= 45 }
        try tmux("send-keys", "-t", "ui", ":load stop", "Enter")
        // Stopped: both sides got every request, and the strip caught up.
        let screen = await tmux.waitFor {
            // The log's lines come in with the frame after the status's.
            guard $0.contains("A, B: workload stopped"), $0.contains("A load stopped after"), $0.contains("B load stopped after"),
                  let l1 = Self.l1(in: $0) else { return false }
            return l1.bGets == l1.aGets && Self.origin(in: $0)?.a == l1.aGets
        }
        let l1 = try #require(Self.l1(in: screen), "screen:\n\(screen)")
        #expect(l1.aGets >= 45 && l1.bGets == l1.aGets, "screen:\n\(screen)")
        #expect(l1.aHits == 0 && l1.bHits == l1.aGets - 20, "screen:\n\(screen)")
        let origin = Self.origin(in: screen)
        #expect(origin?.a == l1.aGets && origin?.b == 20, "screen:\n\(screen)")
        #expect(screen.contains("served from cache            0.0%"), "screen:\n\(screen)")
        #expect(screen.contains("hit ratio of L1 / L1         0.0%"), "screen:\n\(screen)")
        #expect(screen.contains("p99 of a get"), "screen:\n\(screen)")
        #expect(screen.contains("A load stopped after") && screen.contains("B load stopped after"), "screen:\n\(screen)")

        try tmux("send-keys", "-t", "ui", ":set-capacity L1 5", "Enter")
        #expect(await tmux.waitFor { $0.contains("name the side in compare mode") }.contains("set-capacity: name the side"))
        try tmux("send-keys", "-t", "ui", ":set-capacity B:L1 5", "Enter")
        let edited = await tmux.waitFor { $0.contains("B L1: count limit 100 → 5") }
        #expect(edited.contains("entries 5/5"), "screen:\n\(edited)")

        try await Self.focusAndInspectSideB(tmux)

        // 80 columns: a table per side, the strip whole.
        try tmux("resize-window", "-t", "ui", "-x", "80", "-y", "24")
        // (A's table is the focused one: A's L1 was clicked last.)
        let narrow = await tmux.waitFor(30) { $0.contains("╔═ A: ") && $0.contains("╭─ B: ") && Self.origin(in: $0) != nil }
        #expect(Self.origin(in: narrow)?.b == 20, "screen:\n\(narrow)")
        // A click on B's origin row (an SGR mouse report) focuses it: B's table is the focused one.
        let lines = narrow.components(separatedBy: "\n")
        let tableB = try #require(lines.firstIndex { $0.hasPrefix("╭─ B: ") }, "screen:\n\(narrow)")
        let originRow = try #require(lines.indices.first { $0 > tableB && lines[$0].hasPrefix("│ origin") }, "screen:\n\(narrow)")
        try tmux("send-keys", "-t", "ui", "-l", "\u{1B}[<0;20;\(originRow + 1)M")
        try tmux("send-keys", "-t", "ui", "-l", "\u{1B}[<0;20;\(originRow + 1)m")
        let clickedB = await tmux.waitFor(30) { $0.contains("focus: B:origin") && $0.contains("╔═ B: ") }
        #expect(clickedB.contains("focus: B:origin") && clickedB.contains("║›origin"), "screen:\n\(clickedB)")
        #expect(clickedB.contains("╭─ A: "), "A's table is not focused:\n\(clickedB)")

        try tmux("send-keys", "-t", "ui", "q")
        let gone = await tmux.waitFor { !$0.contains("comparison") }
        #expect(!gone.contains("comparison") && !gone.contains("╭─"), "the explorer left and gave the terminal back:\n\(gone)")
    }

    /// At 160 columns (A's panes left, B's right) after `set-capacity B:L1 5`
    /// and `clear A:L1`: Tab then → focuses B's L1 (its pane in double lines,
    /// the status says `B:L1`), Enter lists B's 5 keys under `keys · B:L1`,
    /// a preview peeks at B's levels; a click on A's pane focuses A's L1.
    static func focusAndInspectSideB(_ tmux: EndToEndTests.Tmux) async throws {
        try tmux("send-keys", "-t", "ui", ":clear A:L1", "Enter")
        let cleared = await tmux.waitFor(30) { $0.contains("A: cleared L1") && $0.contains("entries 0/10") }
        #expect(cleared.contains("entries 0/10") && cleared.contains("entries 5/5"), "A's L1 emptied, B's kept:\n\(cleared)")

        try tmux("send-keys", "-t", "ui", "Tab", "Right")
        let focused = await tmux.waitFor(30) { $0.contains("focus: B:L1") && Self.focusedPane(in: $0) != nil }
        #expect(focused.contains("focus: B:L1 (Enter lists its keys, c clears it)"), "screen:\n\(focused)")
        let pane = Self.focusedPane(in: focused)
        #expect(pane?.column == 80 && pane?.title.hasPrefix("╔═ L1 ") == true, "B's L1, on the right, is focused:\n\(focused)")

        try tmux("send-keys", "-t", "ui", "Enter")
        let table = await tmux.waitFor(30) { $0.contains("keys · B:L1 · 5 ") && Self.listedKeys(in: $0).count == 5 }
        #expect(table.contains("keys · B:L1 · 5 "), "the inspector names side B:\n\(table)")
        let keys = Self.listedKeys(in: table)
        #expect(keys.count == 5 && keys.allSatisfy { $0.hasPrefix("key:") }, "B's 5 keys (A's L1 holds none): \(keys)\n\(table)")

        try tmux("send-keys", "-t", "ui", "Enter")
        let preview = await tmux.waitFor(30) { $0.contains("B:L1 · key:") && $0.contains("held by L1") }
        #expect(preview.contains("B:L1 · key:") && preview.contains("held by L1") && preview.contains("not asked: origin"),
                "screen:\n\(preview)")
        try tmux("send-keys", "-t", "ui", "Escape")
        _ = await tmux.waitFor(30) { !$0.contains("held by L1") }
        try tmux("send-keys", "-t", "ui", "Escape")
        let back = await tmux.waitFor(30) { $0.contains("comparison") && !$0.contains("keys · B:L1") }
        #expect(back.contains("comparison") && Self.focusedPane(in: back)?.column == 80, "back on B's L1:\n\(back)")

        // Row 4, column 10 (1-based) is inside A's L1 pane (rows 3-7 at the
        // left). Press and release in one write: ncurses reads them together
        // and reports a click.
        try tmux("send-keys", "-t", "ui", "-l", "\u{1B}[<0;10;4M\u{1B}[<0;10;4m")
        let clickedA = await tmux.waitFor(30) { $0.contains("focus: A:L1") && Self.focusedPane(in: $0)?.column == 0 }
        #expect(clickedA.contains("focus: A:L1") && Self.focusedPane(in: clickedA)?.column == 0, "screen:\n\(clickedA)")
    }

    /// The focused (double-lined) pane's title, from its top-left corner on,
    /// and the column it starts at; nil when none is.
    static func focusedPane(in screen: String) -> (column: Int, title: String)? {
        for line in screen.components(separatedBy: "\n") {
            guard let corner = line.firstIndex(of: "╔") else { continue }
            return (line.distance(from: line.startIndex, to: corner), String(line[corner...]))
        }
        return nil
    }

    /// The keys the inspector's table lists (rows `║ key…` or `║›key…`).
    static func listedKeys(in screen: String) -> [String] {
        screen.components(separatedBy: "\n").compactMap { line in
            line.firstMatch(of: /^║[ ›](key:\d+)\s/).map { String($0.output.1) }
        }
    }

    /// A second file that cannot be read is one line naming it (status 2),
    /// before any terminal is needed; a misspelt field names its line.
    @Test func aBadSecondFileIsOneLine() async throws {
        let directory = TemporaryDirectory("strata-compare-bad")
        defer { directory.remove() }
        let a = directory.path + "/a.yaml", bad = directory.path + "/bad.yaml"
        try ComparisonModelTests.file("small", count: 10).write(toFile: a, atomically: true, encoding: .utf8)
        try ComparisonModelTests.file("bad", count: 10).replacingOccurrences(of: "policy: lru", with: "polcy: lru")
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let missing = try await EndToEndTests.run(["--config", a, "--compare", directory.path + "/none.yaml"])
        #expect(missing.status == 2 && missing.stderr.hasPrefix("strata: error: \(directory.path)/none.yaml"), "\(missing.stderr)")
        #expect(missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
        let misspelt = try await EndToEndTests.run(["--config", a, "--compare", bad])
        #expect(misspelt.status == 2 && misspelt.stderr.hasPrefix("strata: error: \(bad):7"), "\(misspelt.stderr)")
    }

    /// Gets and hits of A's first pane (left) and B's (right), from the first row that has both.
    static func l1(in screen: String) -> (aGets: Int, aHits: Int, bGets: Int, bHits: Int)? {
        for line in screen.components(separatedBy: "\n") {
            let counts = line.matches(of: /gets (\d+)  hits (\d+)/).compactMap { match in
                Int(match.output.1).flatMap { gets in Int(match.output.2).map { (gets, $0) } }
            }
            if counts.count == 2 { return (counts[0].0, counts[0].1, counts[1].0, counts[1].1) }
        }
        return nil
    }

    /// The strip's origin requests: A's and B's.
    static func origin(in screen: String) -> (a: Int, b: Int)? {
        guard let match = screen.firstMatch(of: /requests to origin \/ origin\s+(\d+)\s+(\d+)/),
              let a = Int(match.output.1), let b = Int(match.output.2) else { return nil }
        return (a, b)
    }
}
