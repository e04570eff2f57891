import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// Issue 10: screen and input defects that need no terminal.
@Suite struct IssueTenScreenTests {
    // D2: a 1 MiB paste reaches the limit in linear time (typed key by key, rendered as it goes).
    @Test func pastingAMebibyteIntoTheCommandLineIsLinear() throws {
        var input = InputController()
        _ = input.handle(.character(":"))
        let renderer = Renderer(unicode: true)
        let started = ContinuousClock.now
        let deadline = started + .seconds(20)
        var typed = 0
        var state = RendererTests.fixture()
        outer: while typed < CommandParser.maxLength {
            for _ in 0..<4096 {
                _ = input.handle(.character("x"))
                typed += 1
            }
            // A frame per chunk, as the app paints between batches of keys.
            state.commandLine = input.commandLine
            _ = renderer.render(state, width: 80, height: 24)
            if ContinuousClock.now > deadline { break outer }
        }
        let elapsed = ContinuousClock.now - started
        #expect(input.commandLine?.utf8.count == CommandParser.maxLength - 1 || input.commandLine?.utf8.count == CommandParser.maxLength,
                "reached \(input.commandLine?.utf8.count ?? 0) bytes in \(elapsed)")
        #expect(elapsed < .seconds(20))
        let frame = renderer.render(state, width: 80, height: 24)
        #expect(frame.text.contains(":" + String(repeating: "x", count: 10)) || frame.text.contains("xxxxxxxxxx█"))
    }

    // D7: the footer keeps `? help` and `q quit` at 80 columns and says when hints are left out.
    @Test func footerKeepsHelpAndQuitAtEightyColumns() {
        for width in [80, 60, 40] {
            let frame = Renderer(unicode: true).render(RendererTests.fixture(), width: width, height: 24)
            let footer = frame.text.components(separatedBy: "\n").last ?? ""
            #expect(footer.contains("q quit") && footer.contains("? help"), "\(width) columns: \(footer)")
            #expect(footer.contains("…"), "\(width) columns: hints left out are marked: \(footer)")
        }
        let wide = Renderer(unicode: true).render(RendererTests.fixture(), width: 120, height: 24)
        #expect(!(wide.text.components(separatedBy: "\n").last ?? "").contains("…"))
    }

    // D7: a size warning that does not fit is wrapped, never silently cut.
    @Test func sizeWarningIsNeverCutSilently() {
        let frame = Renderer(unicode: true).render(RendererTests.fixture(), width: 24, height: 6)
        let joined = frame.text.components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(joined.contains("needs 40x8"), "\(frame.text)")
    }

    // D7: the help overlay scrolls when it does not fit, and says so.
    @Test func helpOverlayScrollsWhenItDoesNotFit() {
        var state = RendererTests.fixture()
        state.showHelp = true
        let renderer = Renderer(unicode: true)
        let top = renderer.render(state, width: 80, height: 16).text
        #expect(top.contains("more"), "the overlay says there is more:\n\(top)")
        #expect(!top.contains(":quit"))
        var input = InputController()
        _ = input.handle(.character("?"))
        for _ in 0..<200 { _ = input.handle(.down) }
        input.clampHelpScroll(to: Renderer.helpMaxScroll(height: 16))
        state.helpScroll = input.helpScroll
        let bottom = renderer.render(state, width: 80, height: 16).text
        #expect(bottom.contains(":quit"), "scrolled to the end:\n\(bottom)")
        #expect(input.showHelp, "scrolling keeps the overlay open")
    }

    // D8: the ASCII renderer draws nothing but ASCII, log and status included.
    @Test func asciiFramesAreStrictlyASCII() {
        var state = RendererTests.fixture()
        state.status = CommandOutcome("get user:7: 512 bytes from origin in 950µs: \"origin value…\"")
        state.events.append(EventLine(time: "12:00:03", text: "warn → L1 5→0 · 漢字 ⚠"))
        for (width, height) in [(100, 30), (60, 16), (30, 6)] {
            let frame = Renderer(unicode: false).render(state, width: width, height: height)
            let bad = frame.text.unicodeScalars.filter { !$0.isASCII }
            #expect(bad.isEmpty, "\(width)x\(height) has non-ASCII: \(String(String.UnicodeScalarView(bad)))")
        }
        let frame = Renderer(unicode: false).render(state, width: 100, height: 30).text
        #expect(frame.contains("L1 miss -> L2 miss"))
        #expect(frame.contains("950us"))
    }

    // D10: the renderer, not the model, decides how much of a long line fits.
    @Test func longEventLinesUseTheWholeWidthAndEndWithAnEllipsis() {
        var state = RendererTests.fixture()
        let long = "get k  redis error (" + String(repeating: "connection refused ", count: 10) + "END)"
        state.events = [EventLine(time: "12:00:00", text: long, isError: true)]
        let wide = Renderer(unicode: true).render(state, width: 260, height: 30).text
        #expect(wide.contains("END)"))
        let narrow = Renderer(unicode: true).render(state, width: 80, height: 30).text
        #expect(narrow.contains("connection refused…") || narrow.contains("…"), "\(narrow)")
    }
}
