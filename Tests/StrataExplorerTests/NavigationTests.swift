import Foundation
@testable import StrataExplorer
import Strata
import Testing

/// Issue 10, items 1 and 2: focus, zoom, the event log's selection, filter and
/// detail, as input state and as frames.
@Suite struct NavigationTests {
    static func input(levels: [String] = ["L1", "L2", "origin"]) -> InputController {
        var input = InputController()
        input.completion = Completion(levels: levels)
        return input
    }

    static func manyEvents(_ count: Int) -> [EventLine] {
        (0..<count).map { EventLine(time: "12:00:\(String(format: "%02d", $0 % 60))", text: "get key:\(count - $0)  L1 hit") }
    }

    @Test func tabCyclesLevelsThenTheLogAndShiftTabGoesBack() {
        var input = Self.input()
        #expect(input.focus == nil)
        var seen: [Focus?] = []
        for _ in 0..<5 {
            _ = input.handle(.tab)
            seen.append(input.focus)
        }
        #expect(seen == [.level(0), .level(1), .level(2), .events, .level(0)])
        _ = input.handle(.backTab)
        #expect(input.focus == .events)
        _ = input.handle(.backTab)
        #expect(input.focus == .level(2))
    }

    @Test func jAndKMoveFocusThenScrollTheLog() {
        var input = Self.input()
        _ = input.handle(.character("j"))
        #expect(input.focus == .level(0))
        _ = input.handle(.character("j"))
        _ = input.handle(.character("j"))
        _ = input.handle(.character("j"))
        #expect(input.focus == .events && input.eventSelection == 0)
        _ = input.handle(.character("j"))
        _ = input.handle(.down)
        #expect(input.eventSelection == 2, "j and ↓ select older events once the log has focus")
        _ = input.handle(.character("k"))
        _ = input.handle(.up)
        _ = input.handle(.up)
        #expect(input.focus == .level(2), "past the newest event, k goes back up to the levels")
        _ = input.handle(.pageDown)
        #expect(input.focus == .events && input.eventSelection == InputController.eventPage)
        input.clampEventSelection(to: 4)
        #expect(input.eventSelection == 3)
    }

    @Test func clearActsOnTheFocusedLevel() {
        var input = Self.input()
        _ = input.handle(.character("c"))
        #expect(input.commandLine == "clear ", "nothing focused: the line asks")
        _ = input.handle(.escape)
        _ = input.handle(.tab)
        _ = input.handle(.tab)
        _ = input.handle(.character("c"))
        #expect(input.commandLine == "clear L2", "Enter confirms, Esc cancels")
        #expect(input.handle(.enter) == [.run(.clear(level: "L2"))])
    }

    @Test func clearingEveryLevelAsksFirst() {
        var input = Self.input()
        _ = input.handle(.character("c"))
        let asked = input.handle(.enter)
        #expect(asked.count == 1 && asked.first.map { if case .hint(let text) = $0 { text.contains("y clears") } else { false } } == true,
                "\(asked)")
        #expect(input.handle(.character("y")) == [.run(.clear(level: nil))])
        _ = input.handle(.character("c"))
        _ = input.handle(.enter)
        #expect(input.handle(.character("n")) == [.hint("cancelled")])
        #expect(input.handle(.character("q")) == [.run(.quit)], "the key after a cancel acts again")
        _ = input.handle(.tab)
        _ = input.handle(.character("c"))
        #expect(input.handle(.enter) == [.run(.clear(level: "L1"))], "one level: no question")
    }

    @Test func zoomNeedsAFocusAndEscapeLeavesIt() {
        var input = Self.input()
        _ = input.handle(.character("z"))
        #expect(!input.zoomed)
        _ = input.handle(.tab)
        _ = input.handle(.character("z"))
        #expect(input.zoomed)
        _ = input.handle(.escape)
        #expect(!input.zoomed)
    }

    @Test func slashFiltersEnterOpensTheDetailEscapeClears() {
        var input = Self.input()
        _ = input.handle(.character("/"))
        for c in "miss" { _ = input.handle(.character(c)) }
        #expect(input.filterLine?.text == "miss" && input.eventFilter == nil)
        _ = input.handle(.enter)
        #expect(input.eventFilter == "miss" && input.focus == .events)
        _ = input.handle(.enter)
        #expect(input.showDetail)
        _ = input.handle(.character("q"))
        #expect(!input.showDetail, "q closes the detail, not the explorer")
        _ = input.handle(.escape)
        #expect(input.eventFilter == nil)
        let events = [EventLine(time: "1", text: "get a  L1 MISS → origin hit"), EventLine(time: "2", text: "get b  L1 hit")]
        #expect(EventFilter.apply("miss", to: events).map(\.time) == ["1"])
        #expect(EventFilter.apply(nil, to: events).count == 2)
    }

    // MARK: Frames

    static func state(width: Int) -> ViewState {
        var state = RendererTests.fixture()
        state.events = Self.manyEvents(60)
        state.eventTotal = 60
        return state
    }

    @Test(arguments: [(80, 24), (120, 40), (200, 60)])
    func focusedLevelIsDrawnInDoubleLines(width: Int, height: Int) {
        var state = Self.state(width: width)
        state.focus = .level(1)
        let frame = Renderer(unicode: true).render(state, width: width, height: height)
        #expect(frame.text.contains("╔═ L2 "))
        #expect(!frame.text.contains("╔═ L1 "))
        assertSnapshot(frame.text, named: "focus-L2-\(width)x\(height)")
    }

    @Test(arguments: [(80, 24), (120, 40), (200, 60)])
    func theLogScrollsToItsSelection(width: Int, height: Int) {
        var state = Self.state(width: width)
        state.focus = .events
        state.eventSelection = 40
        let frame = Renderer(unicode: true).render(state, width: width, height: height)
        let selected = frame.text.components(separatedBy: "\n").first { $0.hasPrefix("║›") }
        #expect(selected?.contains("get key:20 ") == true, "the 41st newest is selected and shown: \(selected ?? "none")")
        #expect(frame.text.contains("41/60"))
        assertSnapshot(frame.text, named: "events-selected-\(width)x\(height)")
    }

    @Test func zoomedLogFillsTheScreen() {
        var state = Self.state(width: 80)
        state.focus = .events
        state.zoomed = true
        let frame = Renderer(unicode: true).render(state, width: 80, height: 24)
        #expect(!frame.text.contains("L1 ·"), "no level panes")
        #expect(frame.text.components(separatedBy: "\n").filter { $0.hasPrefix("║ 12:00") || $0.hasPrefix("║›12:00") }.count == 19)
        assertSnapshot(frame.text, named: "zoom-events-80x24")
    }

    @Test func zoomedLevelLeavesTheOthersOut() {
        var state = Self.state(width: 80)
        state.focus = .level(2)
        state.zoomed = true
        let text = Renderer(unicode: true).render(state, width: 80, height: 24).text
        #expect(text.contains("╔═ origin") && !text.contains("L1 ·") && !text.contains("L2 ·"))
    }

    @Test(arguments: [(80, 24), (120, 40), (200, 60)])
    func zoomedLevelGetsLabelledGraphsAndALatencyHistogram(width: Int, height: Int) {
        var state = Self.state(width: width)
        state.panes[0].sparkline = (0..<60).map { (second: Int) -> Double? in second % 10 == 5 ? nil : Double(second) / 59 }
        state.panes[0].getsHistory = (0..<60).map { Double($0 * 100) }
        state.panes[0].p99History = (0..<60).map { (second: Int) -> UInt64? in
            second % 10 == 5 ? nil : UInt64(1_000 + second * 1_000)
        }
        var counts = [UInt64](repeating: 0, count: 164)
        counts[40] = 900  // 1 µs to 2 µs
        counts[52] = 90   // about 8 µs
        counts[80] = 10   // about 1 ms
        state.panes[0].latency = LatencySnapshot(counts: counts)
        state.focus = .level(0)
        state.zoomed = true
        let text = Renderer(unicode: true).render(state, width: width, height: height).text
        let lines = text.components(separatedBy: "\n")
        #expect(text.contains("─ hit ratio last 60 s, newest right "), "\(text)")
        let hundred: String = "│ 100% ", zero: String = "│   0% "
        #expect(lines.contains { $0.hasPrefix(hundred) } && lines.contains { $0.hasPrefix(zero) })
        // The newest second (1.0) fills its column to the top; the oldest (0.0) leaves it empty.
        let top: String = lines.first { $0.hasPrefix(hundred) } ?? ""
        #expect(top.hasSuffix("█ │") || top.contains("█ ││"), "\(top)")
        // gets/s is scaled to a round ceiling over the last minute (5,900 → 10.0k).
        #expect(text.contains("─ gets/s last 60 s"), "\(text)")
        #expect(lines.contains { $0.contains("│ 10.0k ") }, "\(text)")
        if height >= 40 {
            #expect(text.contains("─ p99 last 60 s") && lines.contains { $0.contains("│ 100µs ") }, "\(text)")
            #expect(text.contains("─ get latency 1000 timed gets since the last reset"), "\(text)")
            #expect(lines.contains { $0.contains("≥ 1µs") && $0.contains("900  90.0%") }, "\(text)")
            #expect(lines.contains { $0.contains("≥ 1ms") && $0.contains("10   1.0%") }, "\(text)")
        }
        assertSnapshot(text, named: "zoom-L1-\(width)x\(height)")
    }

    @Test func aGraphWithoutDataSaysSo() {
        var state = Self.state(width: 120)
        state.focus = .level(0)
        state.zoomed = true
        let text = Renderer(unicode: true).render(state, width: 120, height: 40).text
        #expect(text.contains("no data yet") && text.contains("no timed gets yet"), "\(text)")
    }

    @Test func aFocusedLevelBelowTheFoldIsScrolledIntoView() {
        var state = Self.state(width: 80)
        let text0 = Renderer(unicode: true).render(state, width: 80, height: 16).text
        #expect(!text0.contains("origin ·") && text0.contains("+2 more"))
        state.focus = .level(2)
        let text = Renderer(unicode: true).render(state, width: 80, height: 16).text
        #expect(text.contains("╔═ origin"), "the focused level is drawn:\n\(text)")
        #expect(text.contains("+2 more") && text.contains("L1 81%"), "the others are summarised:\n\(text)")
    }

    @Test func filterTitleAndDetailOverlay() {
        var state = Self.state(width: 100)
        let long = "get k  L1 miss → redis error (" + String(repeating: "connection refused ", count: 20) + "END) → failed"
        state.events = [EventLine(time: "12:00:09", text: long, isError: true)]
        state.eventFilter = "refused"
        state.eventTotal = 60
        state.focus = .events
        let titled = Renderer(unicode: true).render(state, width: 100, height: 30).text
        #expect(titled.contains("/refused 1 of 60"))
        state.detail = state.events[0]
        let frame = Renderer(unicode: true).render(state, width: 100, height: 30)
        #expect(frame.text.contains("event 12:00:09"))
        #expect(frame.text.contains("END)"), "the whole error, wrapped:\n\(frame.text)")
        let rows = frame.text.components(separatedBy: "\n")
        #expect(rows.contains { $0.contains("│ get k  L1 miss ") }, "the request, then one step a line:\n\(frame.text)")
        #expect(rows.contains { $0.contains("│ → redis error (connection refused") })
        #expect(rows.contains { $0.contains("│ → failed ") })
        assertSnapshot(frame.text, named: "detail-100x30")
    }

    @Test func compactViewIsOneLinePerLevel() {
        var input = Self.input()
        _ = input.handle(.character("v"))
        #expect(input.compact)
        var state = Self.state(width: 80)
        state.compact = true
        let text = Renderer(unicode: true).render(state, width: 80, height: 24).text
        let lines = text.components(separatedBy: "\n")
        #expect(lines.contains { $0.hasPrefix("│ L1 ") && $0.contains("hit 81.0%") && $0.contains("[1 on]") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("│ origin ") && $0.contains("hit 96.5%") })
        #expect(!text.contains("╭─ L1 "), "no panes")
        assertSnapshot(text, named: "compact-80x24")
    }

    @Test func aDeepPipelineScrollsToTheFocusedLevelInCompactView() {
        var state = Self.state(width: 80)
        let template = state.panes[0]
        state.panes = (1...30).map { n in
            var pane = template
            pane.name = "L\(n)"
            return pane
        }
        state.compact = true
        state.focus = .level(25)
        let text = Renderer(unicode: true).render(state, width: 80, height: 24).text
        #expect(text.contains("║›L26 ") || text.contains("║›L26"), "the focused level is in view:\n\(text)")
        #expect(text.contains(" of 30"), "the title says how many there are:\n\(text)")
        #expect(!text.contains("║ L1 "))
        assertSnapshot(text, named: "compact-deep-80x24")
    }

    @Test func theFilterLineHasItsOwnPrompt() {
        var state = Self.state(width: 80)
        state.filterLine = "miss"
        let text = Renderer(unicode: true).render(state, width: 80, height: 24).text
        #expect(text.contains("/miss█"))
    }

    @Test func everyNewViewIsASCIIInASCIIMode() {
        var state = Self.state(width: 100)
        state.panes[0].sparkline = (0..<60).map { Double($0) / 59 }
        var views: [ViewState] = []
        state.focus = .level(0); state.zoomed = true; views.append(state)
        state.zoomed = false; state.compact = true; views.append(state)
        state.compact = false; state.focus = .events; state.detail = state.events[3]; views.append(state)
        state.detail = nil; state.filterLine = "miss"; state.filterCursor = 2; views.append(state)
        for (index, view) in views.enumerated() {
            let text = Renderer(unicode: false).render(view, width: 100, height: 40).text
            let bad = text.unicodeScalars.filter { !$0.isASCII }
            #expect(bad.isEmpty, "view \(index): \(String(String.UnicodeScalarView(bad)))")
        }
    }

    @Test func focusedFramesAreASCIIInASCIIMode() {
        var state = Self.state(width: 80)
        state.focus = .events
        state.eventSelection = 2
        let text = Renderer(unicode: false).render(state, width: 80, height: 24).text
        #expect(text.unicodeScalars.allSatisfy { $0.isASCII })
        #expect(text.contains("#>12:00"))
    }
}
