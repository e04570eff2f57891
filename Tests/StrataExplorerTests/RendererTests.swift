import Strata
@testable import StrataExplorer
import Testing

@Suite struct RendererTests {
    static func fixture() -> ViewState {
        var l1 = StatisticsSnapshot()
        l1.gets = 1234; l1.hits = 1000; l1.misses = 234; l1.sets = 12; l1.backfills = 230
        l1.getP50 = 900; l1.getP99 = 12_000
        var l2 = StatisticsSnapshot()
        l2.gets = 234; l2.hits = 120; l2.misses = 110; l2.errors = 4; l2.backfills = 110
        l2.getP50 = 45_000; l2.getP99 = 210_000
        var origin = StatisticsSnapshot()
        origin.gets = 114; origin.hits = 110; origin.errors = 4
        origin.getP50 = 41_000_000; origin.getP99 = 58_000_000
        let spark: [Double?] = [nil, 0.2, 0.5, 0.7, 0.8, 0.9, 1.0, 0.85]
        return ViewState(
            title: "demo",
            panes: [
                PaneState(name: "L1", summary: "memory · cond:memory", condition: "memory", conditionOn: true, stats: l1,
                          getsPerSecond: 2300, hitsPerSecond: 1900, entries: 64, countLimit: 64, bytes: 32_000,
                          capacity: 32_768, sparkline: spark, toggleNumber: 1),
                PaneState(name: "L2", summary: "disk · ttl 5m · cond:disk", condition: "disk", conditionOn: false, stats: l2,
                          getsPerSecond: 400, hitsPerSecond: 200, entries: 230, bytes: 120_000, capacity: 524_288,
                          sparkline: spark, lastError: "get user:9: disk on fire", toggleNumber: 2),
                PaneState(name: "origin", summary: "origin · pooled · cap 32", stats: origin, getsPerSecond: 110,
                          hitsPerSecond: 106, sparkline: spark, configuration: "40ms ±15ms · fails 5%"),
            ],
            events: [
                EventLine(time: "12:00:02", text: "get user:7  L1 miss → L2 miss → origin hit 48ms → back-filled L1, L2"),
                EventLine(time: "12:00:01", text: "set user:2 (5 bytes) → stored in every level"),
                EventLine(time: "12:00:00", text: "get user:9  L1 miss → L2 error (disk on fire) → failed", isError: true),
            ],
            status: CommandOutcome("get user:7: 512 bytes from origin in 48ms"),
            hz: 10, workload: "load zipf 1000 keys 2000/s", theme: "default"
        )
    }

    @Test(arguments: [(120, 40), (100, 30), (80, 24), (60, 16), (40, 8)])
    func framesAtSeveralSizes(width: Int, height: Int) {
        let frame = Renderer(unicode: true).render(Self.fixture(), width: width, height: height)
        #expect(frame.width == width && frame.height == height)
        assertSnapshot(frame.text, named: "frame-\(width)x\(height)")
    }

    @Test func asciiFallbackUsesNoUnicode() {
        let frame = Renderer(unicode: false).render(Self.fixture(), width: 100, height: 30)
        #expect(frame.text.unicodeScalars.allSatisfy { $0.isASCII })
        #expect(!frame.text.contains("─") && !frame.text.contains("▁"))
        assertSnapshot(frame.text, named: "frame-ascii-100x30")
    }

    @Test func helpOverlayCommandLineAndPause() {
        var state = Self.fixture()
        state.showHelp = true
        assertSnapshot(Renderer(unicode: true).render(state, width: 100, height: 34).text, named: "frame-help")
        state.showHelp = false
        state.commandLine = "get user:42"
        state.paused = true
        let frame = Renderer(unicode: true).render(state, width: 100, height: 30)
        #expect(frame.text.contains(":get user:42█"))
        #expect(frame.text.contains("‖ PAUSED"))
    }

    @Test func tooSmallTerminalSaysSo() {
        let frame = Renderer(unicode: true).render(Self.fixture(), width: 30, height: 6)
        #expect(frame.text.hasPrefix("terminal too small (30x6)"))
    }

    @Test func panesThatDoNotFitAreSummarisedNotOverdrawn() {
        let frame = Renderer(unicode: true).render(Self.fixture(), width: 80, height: 16)
        let text = frame.text
        #expect(text.contains("+2 more (enlarge the terminal): L2 51% 400/s · origin 96% 110/s"))
        // Every pane's box is whole: as many top corners as bottom corners.
        #expect(text.filter { $0 == "╭" }.count == text.filter { $0 == "╰" }.count)
    }

    @Test func errorsShowInThePaneAndEventLog() {
        let frame = Renderer(unicode: true).render(Self.fixture(), width: 140, height: 30)
        #expect(frame.text.contains("last error: get user:9: disk on fire"))
        #expect(frame.text.contains("[2 OFF]"))
        let errorCells = frame.cells.filter { $0.role == .error }
        #expect(!errorCells.isEmpty)
    }

    @Test func wideAndControlCharactersKeepTheGrid() {
        var buffer = CellBuffer(width: 10, height: 1)
        let used = buffer.put("漢字\u{7}ab", x: 0, y: 0, role: .normal)
        #expect(used == 7)
        #expect(buffer.text == "漢字·ab")
        var clipped = CellBuffer(width: 3, height: 1)
        clipped.put("a漢字", x: 0, y: 0, role: .normal)
        #expect(clipped.text == "a漢")
    }

    @Test func sparklineScalesRatios() {
        let renderer = Renderer(unicode: true)
        #expect(renderer.sparkline([0, 0.5, 1, nil], width: 10) == "▁▅█ ")
        #expect(Renderer(unicode: false).sparkline([0, 1], width: 10) == "_@")
        #expect(renderer.sparkline([0, 0.5, 1], width: 2) == "▅█")
    }
}
