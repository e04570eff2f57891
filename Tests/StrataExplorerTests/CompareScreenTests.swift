import Strata
@testable import StrataExplorer
import Testing

/// Compare mode's frames: both sides and the comparison strip, a table per
/// side at 80 columns and panes side by side at 160, nothing that matters cut.
@Suite struct CompareScreenTests {
    /// The renderer fixture as A; B: the same levels, L1 hitting twice as
    /// often, so half the origin requests.
    static func fixture() -> ViewState {
        var state = RendererTests.fixture()
        state.title = "A: small.yaml  vs  B: big.yaml"
        var panesB = state.panes
        panesB[0].stats.hits = 1177
        panesB[0].stats.misses = 57
        panesB[0].configuration = "count 500"
        panesB[1].stats.gets = 57
        panesB[1].stats.hits = 0
        panesB[1].stats.misses = 57
        panesB[2].stats.gets = 57
        panesB[2].stats.hits = 57
        panesB[2].stats.errors = 0
        let comparison = PipelineComparison(.init(label: "A", panes: state.panes, p99: 48_000_000),
                                            .init(label: "B", panes: panesB, p99: 9_000))
        state.comparison = ComparisonView(labelA: "A: small.yaml", labelB: "B: big.yaml", panesB: panesB,
                                          rows: ComparisonView.strip(comparison))
        return state
    }

    /// The strip's rows, whole, in `frame`.
    static func expectStrip(_ frame: String, sourceLocation: SourceLocation = #_sourceLocation) {
        for row in [
            "figure                       A      B      B - A",
            "hit ratio of L1 / L1         81.0%  95.4%  +14.3 points",
            "served from cache            90.8%  95.4%  +4.6 points",
            "requests to origin / origin  114    57     -57 (-50.0%)",
            "p99 of a get                 48ms   9µs    -48ms",
        ] {
            #expect(frame.contains(row), "missing \(row):\n\(frame)", sourceLocation: sourceLocation)
        }
    }

    @Test func narrowTerminalsShowATablePerSideAndTheWholeStrip() {
        let frame = Renderer(unicode: true).render(Self.fixture(), width: 80, height: 24).text
        assertSnapshot(frame, named: "compare-80x24")
        #expect(frame.contains("strata · A: small.yaml  vs  B: big.yaml"))
        #expect(frame.contains("╭─ A: small.yaml") && frame.contains("╭─ B: big.yaml"), "\(frame)")
        // Each side's L1: its own gets and hits.
        #expect(frame.contains("hit 81.0%  gets 1234  hits 1000  p99 12µs"), "\(frame)")
        #expect(frame.contains("hit 95.4%  gets 1234  hits 1177  p99 12µs"), "\(frame)")
        #expect(frame.contains("origin hit 100.0%  gets 57  hits 57"), "\(frame)")
        Self.expectStrip(frame)
        #expect(frame.contains("events"))
    }

    @Test func wideTerminalsShowBothSidesPanes() {
        let frame = Renderer(unicode: true).render(Self.fixture(), width: 160, height: 48).text
        assertSnapshot(frame, named: "compare-160x48")
        let lines = frame.components(separatedBy: "\n")
        #expect(lines.contains { $0.hasPrefix(" A: small.yaml") && $0.contains(" B: big.yaml") }, "\(frame)")
        // A's pane on the left, B's on the right of the same row.
        #expect(lines.contains { $0.hasPrefix("╭─ L1") && $0.dropFirst(80).hasPrefix("╭─ L1 · memory · cond:memory · count 500") },
                "\(frame)")
        #expect(lines.contains { $0.contains("gets 1234  hits 1000") && $0.contains("gets 1234  hits 1177") }, "\(frame)")
        Self.expectStrip(frame)
    }

    @Test func asciiCompareFrameIsPlainASCII() {
        let frame = Renderer(unicode: false).render(Self.fixture(), width: 80, height: 24).text
        #expect(frame.unicodeScalars.allSatisfy { $0.isASCII }, "\(frame)")
        assertSnapshot(frame, named: "compare-ascii-80x24")
    }

    /// `v` shows the tables even when the panes would fit; a short terminal
    /// keeps the log and the strip by scrolling each side's table.
    @Test func compactAndShortTerminalsKeepTheStrip() {
        var state = Self.fixture()
        state.compact = true
        let compact = Renderer(unicode: true).render(state, width: 160, height: 48).text
        #expect(compact.contains("╭─ A: small.yaml") && !compact.contains("╭─ L1"), "\(compact)")
        Self.expectStrip(compact)
        state.compact = false
        let short = Renderer(unicode: true).render(state, width: 80, height: 20).text
        #expect(short.contains("of 3"), "a side's table says it scrolls:\n\(short)")
        #expect(short.contains("requests to origin / origin  114    57     -57 (-50.0%)"), "\(short)")
    }

    /// The help overlay names compare mode and its side syntax.
    @Test func helpListsCompareMode() {
        let lines = Renderer.helpLines.map(\.0)
        #expect(lines.contains("strata --config A --compare B"))
        #expect(lines.contains("set-capacity B:L1 64"))
    }
}
