@testable import StrataExplorer
import Testing

/// Issue 10, item 6: a press focuses the pane under the pointer, the wheel
/// scrolls the event log.
@MainActor @Suite struct MouseTests {
    @Test func aPressFocusesThePaneUnderThePointer() {
        let frame = Renderer(unicode: true).render(NavigationTests.state(width: 80), width: 80, height: 24)
        #expect(frame.focus(atRow: 0) == nil, "the title bar")
        #expect(frame.focus(atRow: 2) == .level(0))
        #expect(frame.focus(atRow: 8) == .level(1))
        #expect(frame.focus(atRow: 13) == .level(2))
        #expect(frame.focus(atRow: 18) == .events)
        #expect(frame.focus(atRow: 23) == nil, "the footer")
        var input = NavigationTests.input()
        ExplorerApp.handle(MouseEvent(.press, x: 10, y: 8), regions: frame.regions, input: &input)
        #expect(input.focus == .level(1))
        ExplorerApp.handle(MouseEvent(.wheelDown, x: 10, y: 8), regions: frame.regions, input: &input)
        ExplorerApp.handle(MouseEvent(.wheelDown, x: 10, y: 8), regions: frame.regions, input: &input)
        #expect(input.focus == .events && input.eventSelection == 2 * MouseEvent.wheelStep)
        ExplorerApp.handle(MouseEvent(.wheelUp, x: 10, y: 8), regions: frame.regions, input: &input)
        #expect(input.eventSelection == MouseEvent.wheelStep)
    }

    @Test func inTheCompactViewEachLineIsALevel() {
        var state = NavigationTests.state(width: 80)
        state.compact = true
        let frame = Renderer(unicode: true).render(state, width: 80, height: 24)
        #expect(frame.focus(atRow: 2) == .level(0))
        #expect(frame.focus(atRow: 4) == .level(2))
        #expect(frame.focus(atRow: 8) == .events)
    }

    @Test func pressesWaitWhileALineIsOpen() {
        var input = NavigationTests.input()
        _ = input.handle(.character(":"))
        input.click(.level(2))
        input.scrollEvents(by: 3)
        #expect(input.focus == nil && input.eventSelection == 0 && input.commandLine == "")
    }

    @Test func ncursesReportsMapToEvents() {
        #expect(NcursesBackend.mouse(2, x: 3, y: 4) == MouseEvent(.press, x: 3, y: 4))
        #expect(NcursesBackend.mouse(2 << 15, x: 0, y: 0)?.kind == .wheelUp)
        #expect(NcursesBackend.mouse(2 << 20, x: 0, y: 0)?.kind == .wheelDown)
        #expect(NcursesBackend.mouse(1, x: 0, y: 0) == nil, "a release")
        // A press and its release read together come merged into a click (or a double click).
        #expect(NcursesBackend.mouse(4, x: 5, y: 6) == MouseEvent(.press, x: 5, y: 6))
        #expect(NcursesBackend.mouse(8, x: 5, y: 6) == MouseEvent(.press, x: 5, y: 6))
        #expect(NcursesBackend.mouse(2 << 5, x: 0, y: 0) == nil, "button 2")
    }
}
