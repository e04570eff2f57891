import Foundation
import StrataTestSupport
import Testing

/// `strata --config a.yaml --compare b.yaml` in a real terminal (tmux): one
/// workload against an LRU L1 of 10 entries and one of 100, both sides and
/// the comparison strip on screen, a side-less live edit refused, a sided
/// one applied, and the terminal given back on `q`.
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

        // 80 columns: a table per side, the strip whole.
        try tmux("resize-window", "-t", "ui", "-x", "80", "-y", "24")
        let narrow = await tmux.waitFor { $0.contains("╭─ A: ") && $0.contains("╭─ B: ") }
        #expect(Self.origin(in: narrow)?.b == 20, "screen:\n\(narrow)")

        try tmux("send-keys", "-t", "ui", "q")
        let gone = await tmux.waitFor { !$0.contains("comparison") }
        #expect(!gone.contains("comparison") && !gone.contains("╭─"), "the explorer left and gave the terminal back:\n\(gone)")
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
