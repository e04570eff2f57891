import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// Compare mode reaches side B: focus moves over both sides' levels, the
/// focused one is highlighted on its side, `c` and the inspector act on that
/// side's level, and a press on a B pane or a B row focuses it.
@MainActor @Suite struct CompareFocusTests {
    /// Input as the app sets it up in compare mode: A and B have L1, L2 and origin.
    static func input(sideBySide: Bool = true) -> InputController {
        var input = InputController()
        let names = ["L1", "L2", "origin"]
        input.completion = Completion(levels: Completion.sided(names, names))
        input.sides = CompareSides(a: names, b: names, sideBySide: sideBySide)
        return input
    }

    static func press(_ key: KeyPress, _ count: Int = 1, on input: inout InputController) -> [InputAction] {
        (0..<count).flatMap { _ in input.handle(key) }
    }

    @Test func tabGoesOverASLevelsThenBsThenTheLog() {
        var input = Self.input()
        var seen: [Focus?] = []
        var hints: [InputAction] = []
        for _ in 0..<8 {
            hints += input.handle(.tab)
            seen.append(input.focus)
        }
        #expect(seen == [.level(0), .level(1), .level(2), .levelB(0), .levelB(1), .levelB(2), .events, .level(0)])
        #expect(hints.contains(.hint("focus: B:L1 (Enter lists its keys, c clears it)")), "\(hints)")
        #expect(hints.contains(.hint("focus: A:origin (Enter lists its keys, c clears it)")), "\(hints)")
        #expect(hints.contains(.hint("focus: the event log")), "\(hints)")
        _ = input.handle(.backTab)
        #expect(input.focus == .events)
        _ = input.handle(.backTab)
        #expect(input.focus == .levelB(2))
        #expect(input.handle(.character("g")).isEmpty, "no focus change, no hint")
    }

    /// Side by side: j/k stay in a column, ←/→ cross to the same row of the other.
    @Test func sideBySideJKStayInAColumnAndArrowsCross() {
        var input = Self.input(sideBySide: true)
        _ = input.handle(.right)
        #expect(input.focus == .levelB(0), "→ with nothing focused: B's first level")
        _ = Self.press(.character("j"), 2, on: &input)
        #expect(input.focus == .levelB(2))
        _ = input.handle(.left)
        #expect(input.focus == .level(2))
        _ = input.handle(.left)
        #expect(input.focus == .level(2), "← on side A stays")
        _ = input.handle(.right)
        _ = input.handle(.character("j"))
        #expect(input.focus == .events, "past B's last level: the log below")
        _ = input.handle(.character("k"))
        #expect(input.focus == .levelB(2), "k from the log: back into the column focused last")
        _ = Self.press(.up, 5, on: &input)
        #expect(input.focus == .levelB(0), "k stops at the top of B's column")
        _ = input.handle(.left)
        _ = Self.press(.character("j"), 3, on: &input)
        #expect(input.focus == .events)
        _ = input.handle(.character("k"))
        #expect(input.focus == .level(2), "from the log back to A's column")
    }

    /// A table per side, A's above B's: j/k walk A's levels, then B's, as on screen.
    @Test func stackedJKWalkAThenB() {
        var input = Self.input(sideBySide: false)
        var seen: [Focus?] = []
        for _ in 0..<7 {
            _ = input.handle(.character("j"))
            seen.append(input.focus)
        }
        #expect(seen == [.level(0), .level(1), .level(2), .levelB(0), .levelB(1), .levelB(2), .events])
        _ = input.handle(.character("k"))
        #expect(input.focus == .levelB(2), "the log's neighbour above is B's table")
        _ = Self.press(.character("k"), 3, on: &input)
        #expect(input.focus == .level(2), "from B's first level up into A's table")
        _ = input.handle(.right)
        #expect(input.focus == .levelB(2), "→ crosses in this layout too")
    }

    @Test func outsideCompareModeArrowsAndSidesDoNothing() {
        var input = NavigationTests.input()
        _ = input.handle(.right)
        _ = input.handle(.left)
        #expect(input.focus == nil)
        _ = input.handle(.tab)
        #expect(input.handle(.tab) == [], "no status hint for one pipeline")
        _ = input.handle(.character("c"))
        #expect(input.commandLine == "clear L2", "a plain name outside compare mode")
    }

    /// `c` opens `:clear` on the focused side's level only; Enter on a level
    /// opens the inspector on that side.
    @Test func clearAndTheInspectorActOnTheFocusedSide() {
        var input = Self.input()
        _ = Self.press(.tab, 4, on: &input)
        _ = input.handle(.character("c"))
        #expect(input.commandLine == "clear B:L1")
        #expect(input.handle(.enter) == [.run(.clear(level: "B:L1"))])
        _ = input.handle(.left)
        _ = input.handle(.character("c"))
        #expect(input.commandLine == "clear A:L1", "side A's level alone, not both")
        _ = input.handle(.escape)
        _ = input.handle(.right)
        #expect(input.handle(.enter) == [.inspect(level: 0)])
        #expect(input.inspector?.side == .b && input.inspector?.level == 0)
        #expect(input.handle(.escape) == [.inspect(level: nil)])
        #expect(input.focus == .levelB(0), "the inspector closes back onto B's L1")
        _ = input.handle(.left)
        _ = input.handle(.enter)
        #expect(input.inspector?.side == .a)
    }

    /// Clearing every level in compare mode lists each side's levels once.
    @Test func clearingEverythingNamesBothSides() {
        var input = Self.input()
        _ = input.handle(.character("c"))
        #expect(input.handle(.enter) == [.hint("clear every level (A: L1, L2, origin; B: L1, L2, origin)? y clears, any other key cancels")])
    }

    // MARK: Frames

    static func state(focus: Focus?) -> ViewState {
        var state = CompareScreenTests.fixture()
        state.focus = focus
        return state
    }

    /// At 160 columns B's L1 is drawn focused on the right, A's L1 plain on
    /// the left; a press on the right half focuses B's pane, on the left A's.
    @Test func wideFramesHighlightBsPaneAndPressesReachIt() throws {
        let state = Self.state(focus: .levelB(0))
        let frame = Renderer(unicode: true).render(state, width: 160, height: 48)
        assertSnapshot(frame.text, named: "compare-focus-B-L1-160x48")
        let lines = frame.text.components(separatedBy: "\n")
        let row = try #require(lines.firstIndex { $0.dropFirst(80).hasPrefix("╔═ L1 ") }, "\(frame.text)")
        #expect(lines[row].hasPrefix("╭─ L1 "), "A's L1 is not focused:\n\(frame.text)")
        #expect(lines.filter { $0.contains("╔═") }.count == 1, "one focused pane:\n\(frame.text)")
        #expect(Renderer.comparesSideBySide(state, width: 160, height: 48))
        let paneRow = row + 2
        #expect(frame.focus(x: 100, y: paneRow) == .levelB(0))
        #expect(frame.focus(x: 10, y: paneRow) == .level(0))
        #expect(frame.focus(x: 100, y: paneRow + 5) == .levelB(1))

        var input = Self.input()
        let actions = ExplorerApp.handle(MouseEvent(.press, x: 120, y: paneRow + 5), regions: frame.regions, input: &input)
        #expect(input.focus == .levelB(1))
        #expect(actions == [.hint("focus: B:L2 (Enter lists its keys, c clears it)")])
        ExplorerApp.handle(MouseEvent(.press, x: 3, y: paneRow), regions: frame.regions, input: &input)
        #expect(input.focus == .level(0))
    }

    /// At 80 columns (a table per side) B's table is the focused one, its L2
    /// line marked; a press on B's rows focuses B's levels.
    @Test func narrowFramesMarkBsRowAndPressesReachIt() throws {
        let state = Self.state(focus: .levelB(1))
        let frame = Renderer(unicode: true).render(state, width: 80, height: 24)
        assertSnapshot(frame.text, named: "compare-focus-B-L2-80x24")
        let lines = frame.text.components(separatedBy: "\n")
        #expect(!Renderer.comparesSideBySide(state, width: 80, height: 24))
        #expect(lines.contains { $0.hasPrefix("╔═ B: big.yaml") }, "B's table focused:\n\(frame.text)")
        #expect(lines.contains { $0.hasPrefix("╭─ A: small.yaml") }, "A's table not:\n\(frame.text)")
        let marked = lines.indices.filter { lines[$0].hasPrefix("║›") }
        #expect(marked.count == 1 && marked.first.map { lines[$0].hasPrefix("║›L2 ") } == true, "\(frame.text)")
        let bRows = lines.indices.filter { lines[$0].hasPrefix("║") && !lines[$0].contains("═") }
        let rowsB = bRows.map { frame.focus(x: 20, y: $0) }
        #expect(rowsB == [.levelB(0), .levelB(1), .levelB(2)], "\(frame.text)")
        var input = Self.input(sideBySide: false)
        ExplorerApp.handle(MouseEvent(.press, x: 20, y: try #require(bRows.last)), regions: frame.regions, input: &input)
        #expect(input.focus == .levelB(2))
        let aRow = try #require(lines.firstIndex { $0.hasPrefix("│ L1 ") }, "\(frame.text)")
        ExplorerApp.handle(MouseEvent(.press, x: 20, y: aRow), regions: frame.regions, input: &input)
        #expect(input.focus == .level(0))
    }

    /// The inspector's title names the side of the level it lists.
    @Test func theInspectorTitleNamesTheSide() {
        var state = Self.state(focus: .levelB(0))
        var view = InspectorScreenTests.view()
        view.level = "B:L1"
        state.inspector = view
        let text = Renderer(unicode: true).render(state, width: 80, height: 24).text
        #expect(text.components(separatedBy: "\n")[1].contains("keys · B:L1 · 30 · sort freq ↓"), "\(text)")
    }
}

/// Compare mode's inspector over real pipelines: opened on B's L1 it lists
/// B's keys (not A's), says `B:L1`, and a preview peeks at B's levels.
@MainActor @Suite struct CompareInspectorFeedTests {
    @Test func theInspectorReadsTheFocusedSidesLevel() async throws {
        let comparison = try ComparisonModelTests.comparison()
        try await ComparisonModelTests.withShutdown(comparison) {
            // A key on both sides, and one on each side alone: which is listed tells the sides apart.
            _ = await comparison.execute(.set(key: "both", value: "ab"))
            _ = await comparison.a.execute(.set(key: "only-a", value: "a"))
            _ = await comparison.b.execute(.set(key: "only-b", value: "bb"))
            let feedA = InspectorFeed(pipeline: comparison.a.pipeline, side: .a)
            let feedB = InspectorFeed(pipeline: comparison.b.pipeline, side: .b)
            var input = CompareFocusTests.input()
            _ = input.handle(.right)
            #expect(input.handle(.enter) == [.inspect(level: 0)])

            // The listing is fetched on a task: poll the frames until it is in.
            let deadline = ContinuousClock.now + .seconds(30)
            var view: InspectorView?
            repeat {
                view = ExplorerApp.viewState(model: comparison.a, input: &input, hz: 10, theme: "default", height: 24,
                                             feed: feedA, feedB: feedB, comparison: comparison).inspector
                if view?.loading == false { break }
                try await Task.sleep(for: .milliseconds(20))
            } while ContinuousClock.now < deadline
            let listed = try #require(view, "the inspector is open")
            #expect(listed.level == "B:L1" && !listed.loading, "\(listed)")
            #expect(listed.rows.map(\.key).sorted() == ["both", "only-b"], "B's keys only: \(listed.rows.map(\.key))")

            let preview = await feedB.peek("only-b", level: 0)
            #expect(preview.level == "B:L1" && preview.value == Data("bb".utf8) && preview.holders == ["L1"], "\(preview)")
            let fromA = await feedA.peek("only-b", level: 0)
            #expect(fromA.level == "A:L1" && fromA.value == nil, "A never held it: \(fromA)")
        }
    }
}
