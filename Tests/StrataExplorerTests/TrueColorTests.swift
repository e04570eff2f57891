import Foundation
import Testing
@testable import StrataExplorer

/// Issue 10, item 6: with `COLORTERM=truecolor` (or `24bit`) the theme's
/// exact colours reach the terminal; without it they are mapped to the
/// 256-colour palette as before.
@Suite(.serialized) struct TrueColorTests {
    typealias E2E = EndToEndTests

    /// The title bar's background in the default theme, `#2a4a7a`: not a
    /// palette colour, so it shows whether colours were sent exactly.
    static let exactTitle = "48;2;42;74;122"

    func escapedScreen(colorTerm: String?) async throws -> String {
        let config = try E2E.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        let environment = "TERM=xterm-256color LC_ALL=C.UTF-8" + (colorTerm.map { " COLORTERM=\($0)" } ?? "")
        try tmux("new-session", "-d", "-s", "ui", "-x", "100", "-y", "30",
                 "env -u NO_COLOR \(environment) \(E2E.binary) --config \(config); sleep 30")
        _ = await tmux.waitFor { $0.contains("events") && $0.contains("L1") }
        // -e keeps the colours, as tmux stored them from what the explorer sent.
        var escaped = ""
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            escaped = try tmux("capture-pane", "-e", "-p", "-t", "ui")
            if escaped.contains("events") && escaped.contains("\u{1B}[") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        try tmux("send-keys", "-t", "ui", "q")
        return escaped
    }

    @Test func colortermTruecolorSendsTheThemesExactColours() async throws {
        let screen = try await escapedScreen(colorTerm: "truecolor")
        #expect(screen.contains(Self.exactTitle), "no 24-bit title colour in:\n\(screen.prefix(600))")
    }

    @Test func withoutColortermColoursAreFromThe256Palette() async throws {
        let screen = try await escapedScreen(colorTerm: nil)
        #expect(!screen.contains("48;2;") && !screen.contains("38;2;"), "24-bit colours without COLORTERM")
        #expect(screen.contains("48;5;"), "palette colours expected:\n\(screen.prefix(600))")
    }

    @Test func theDirectDescriptionIsChosenFromTheTerminalsFamily() {
        let installed = NcursesBackend.terminfoExists("xterm-direct", environment: [:])
        let environment = ["COLORTERM": "24bit"]
        #expect(NcursesBackend.directColorTerminal(term: "xterm-256color", environment: environment)
                == (installed ? "xterm-direct" : nil))
        #expect(NcursesBackend.directColorTerminal(term: "xterm-256color", environment: [:]) == nil)
        #expect(NcursesBackend.directColorTerminal(term: "xterm-256color", environment: ["COLORTERM": "yes"]) == nil)
        #expect(NcursesBackend.directColorTerminal(term: "xterm-direct", environment: environment) == nil)
        #expect(!NcursesBackend.terminfoExists("no-such-terminal-direct", environment: [:]))
        #expect(!NcursesBackend.terminfoExists("../x/xterm", environment: [:]))
        if NcursesBackend.terminfoExists("tmux-direct", environment: [:]) {
            #expect(NcursesBackend.directColorTerminal(term: "screen-256color", environment: ["COLORTERM": "truecolor", "TMUX": "/tmp/t"])
                    == "tmux-direct")
        }
        // GNU screen outside tmux does not take 24-bit colour; other families
        // do not borrow xterm's description.
        #expect(NcursesBackend.directColorTerminal(term: "screen-256color", environment: ["COLORTERM": "truecolor"]) == nil)
        #expect(NcursesBackend.directColorTerminal(term: "rxvt-unicode-256color", environment: environment) == nil)
        if NcursesBackend.terminfoExists("st-direct", environment: [:]) {
            #expect(NcursesBackend.directColorTerminal(term: "st", environment: environment) == "st-direct")
        }
    }

    @Test func directColourNumbersAreExactAndAvoidTheBasicEight() {
        #expect(ThemeColor.rgb(0x2A, 0x4A, 0x7A).direct == 0x2A4A7A)
        #expect(ThemeColor.rgb(0, 0, 5).direct == 8, "0…7 mean the basic colours in direct-colour descriptions")
        #expect(ThemeColor.terminalDefault.direct == nil)
    }
}
