import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// Rule 2 audit of the explorer: nothing crashes and nothing is lost under bad
/// input; bad input gets one clear line naming what was wrong. Every test here
/// fails on the code it was written against (one defect each).
@Suite struct ExplorerAuditTests {

    // MARK: Command line editing

    /// Typing a character that joins the following characters into one
    /// grapheme (here a man before `ZWJ woman`) leaves the cursor counting more
    /// characters than the text holds; the next cursor key traps.
    @Test func lineEditorCursorStaysWithinTextWhenAnInsertJoinsGraphemes() {
        var editor = LineEditor()
        editor.insert("\u{200D}")   // ZWJ: a character of its own at the start
        editor.insert("👩")
        editor.moveToStart()        // 2 characters after the cursor
        editor.insert("👨")          // 👨 ZWJ 👩 is now one character
        #expect(editor.charactersAfterCursor <= editor.text.count,
                "cursor \(editor.charactersAfterCursor) characters from the end of a \(editor.text.count)-character text")
    }

    /// The same through the keys a user types at `:`: the explorer must not
    /// crash (it traps in `LineEditor.cursorIndex`).
    @Test func commandLineSurvivesAJoiningInsertThenACursorKey() async {
        await #expect(processExitsWith: .success) {
            var input = InputController()
            for key: KeyPress in [.character(":"), .character("\u{200D}"), .character("👩"), .home, .character("👨"), .left, .backspace] {
                _ = input.handle(key)
            }
        }
    }

    /// Tab completion matches case-insensitively but inserts only the rest of
    /// the name, so `clear l1<Tab>` becomes `clear l1 `, which names no level.
    @Test func completionWritesTheNameAsItIsSpelt() {
        let completion = Completion(levels: ["L1", "L2"], toggles: ["Memory"], themes: [])
        var editor = LineEditor("clear l1")
        _ = completion.complete(&editor)
        #expect(editor.text == "clear L1 ")
        var toggle = LineEditor("toggle mem")
        _ = completion.complete(&toggle)
        #expect(toggle.text == "toggle Memory ")
    }

    /// A value that begins with a combining mark joins the blank before it into
    /// one character, so the parser sees no separator and says the value is missing.
    @Test func setValueMayBeginWithACombiningMark() throws {
        #expect(try CommandParser.parse("set k \u{301}v") == .set(key: "k", value: "\u{301}v"))
    }

    // MARK: Escape sequences

    /// A CSI that follows a broken SS3 must not turn into typed characters
    /// (the CSI state handles an ESC; the SS3 state swallows it).
    @Test func escapeAfterABrokenSS3StartsANewSequence() {
        var parser = EscapeSequenceParser()
        let keys = "\u{1B}O\u{1B}[A".unicodeScalars.flatMap { parser.feed($0.value) } + parser.endOfInput()
        #expect(keys == [.up])
    }

    /// `ESC O 5 P` (a modified F1 from terminals that send SS3 parameters) is
    /// an unknown sequence: dropped whole, not `P` typed.
    @Test func ss3WithParametersIsDroppedWhole() {
        var parser = EscapeSequenceParser()
        let keys = "\u{1B}O5P".unicodeScalars.flatMap { parser.feed($0.value) } + parser.endOfInput()
        #expect(!keys.contains(.character("P")), "\(keys)")
    }

    // MARK: Rendering

    /// `CellBuffer` clamps a negative size to 0; the renderer traps on it
    /// ("Can't take a prefix of negative length") in the too-small branch.
    @Test func renderingANegativeHeightDoesNotTrap() async {
        await #expect(processExitsWith: .success) {
            _ = Renderer(unicode: true).render(ViewState(title: "t", panes: []), width: 20, height: -1)
        }
    }

    /// Writing over the second half of a wide character leaves the first half
    /// claiming two columns (an overlay's edge over CJK text in the event log):
    /// the row no longer adds up to the buffer's width.
    @Test func overwritingHalfAWideCharacterKeepsTheRowConsistent() {
        var buffer = CellBuffer(width: 4, height: 1)
        buffer.put("日本", x: 0, y: 0, role: .normal)
        buffer.put("│", x: 1, y: 0, role: .border)
        var columns = 0
        for x in 0..<buffer.width where !buffer[x, 0].isContinuation { columns += TextWidth.of(buffer[x, 0].character) }
        #expect(columns == buffer.width, "row \(buffer.text.debugDescription) spans \(columns) columns")
    }

    /// A fill that starts past the right edge, or with a negative count,
    /// draws nothing (it built a range with its lower bound above its upper).
    @Test func fillOutsideTheBufferDrawsNothing() async {
        await #expect(processExitsWith: .success) {
            var buffer = CellBuffer(width: 4, height: 1)
            buffer.fill("x", x: 9, y: 0, count: 2, role: .normal)
            buffer.fill("x", x: 1, y: 0, count: -3, role: .normal)
            buffer.fill("x", x: -2, y: 0, count: 1, role: .normal)
            precondition(buffer.text.isEmpty, "drew \(buffer.text)")
        }
    }

    // MARK: strata run

    static func model(_ yaml: String) throws -> ExplorerModel {
        ExplorerModel(pipeline: try Pipeline(try PipelineFile.parse(yaml, file: "audit.yaml")))
    }

    /// `printable` keeps control characters out of messages, but the echo of
    /// each command (`> set k …`) writes the script's line raw: an escape
    /// sequence in a value reaches the terminal.
    @Test func runEchoesNoControlCharacters() async throws {
        let model = try Self.model("levels:\n  - kind: memory\n    capacity: 1KiB\n")
        await model.withShutdown {
            let output = Lines()
            let runner = ScriptRunner(model: model, write: { output.append($0) }, writeError: { output.append($0) })
            _ = await runner.run(lines: ["set k \u{1B}[2Jvalue", "theme \u{1B}]0;owned\u{7}"], source: "script")
            let text = output.all.joined(separator: "\n")
            #expect(!text.unicodeScalars.contains { $0.properties.generalCategory == .control && $0 != "\n" },
                    "\(text.debugDescription)")
        }
    }

    /// The statistics table pads with `padding(toLength:)`, which counts UTF-16
    /// units, to widths counted in characters: a level name outside the BMP is cut.
    @Test func runTableKeepsWholeLevelNames() async throws {
        let model = try Self.model("levels:\n  - kind: memory\n    capacity: 1KiB\n    name: 🚀🚀🚀🚀🚀🚀\n")
        await model.withShutdown {
            let runner = ScriptRunner(model: model, write: { _ in }, writeError: { _ in })
            #expect(runner.statisticsTable().contains("🚀🚀🚀🚀🚀🚀"), "\(runner.statisticsTable())")
        }
    }

    /// A script saved with a UTF-8 byte-order mark fails on line 1 with
    /// `unknown command '\u{FEFF}get'` (the mark is invisible in the message).
    @Test func runAcceptsAByteOrderMark() async throws {
        let model = try Self.model("levels:\n  - kind: memory\n    capacity: 1KiB\n")
        await model.withShutdown {
            let errors = Lines()
            let runner = ScriptRunner(model: model, write: { _ in }, writeError: { errors.append($0) })
            let failures = await runner.run(lines: ScriptRunner.lines(of: "\u{FEFF}get a\r\n# done\r\n"), source: "s")
            #expect(failures == 0, "\(errors.all)")
        }
    }

    // MARK: Themes

    /// A theme file with a byte-order mark is refused on line 1 with a message
    /// that looks like a valid line.
    @Test func themeAcceptsAByteOrderMark() throws {
        let theme = try Theme.parse("\u{FEFF}theme[main_fg]=\"#ffffff\"\n", name: "t", file: "t.theme")
        #expect(theme.colors["main_fg"] == .rgb(255, 255, 255))
    }

    /// Lines are split at every Unicode newline (U+2028, NEL, form feed), not
    /// just `\n`: a comment containing one breaks into a bad line, and errors
    /// after one name the wrong line.
    @Test func themeLinesAreSplitAtLineFeedsOnly() throws {
        let theme = try Theme.parse("# warm \u{2028} colours\ntheme[main_fg]=\"#ffffff\"\n", name: "t", file: "t.theme")
        #expect(theme.colors["main_fg"] == .rgb(255, 255, 255))
        do {
            _ = try Theme.parse("# page\u{0C}\ntheme[main_fg]=\"bad\"\n", name: "t", file: "t.theme")
            Issue.record("expected an error")
        } catch let error as ThemeError {
            #expect(error.line == 2, "\(error)")
        }
    }

    /// `" #ffffff"` (a blank inside the quotes) is cut at ` #` as if a comment
    /// began inside the value; the error quotes `"` instead of the value.
    @Test func themeCommentIsNotFoundInsideQuotes() {
        do {
            let theme = try Theme.parse("theme[main_fg]=\" #ffffff\"\n", name: "t", file: "t.theme")
            #expect(theme.colors["main_fg"] == .rgb(255, 255, 255))
        } catch {
            #expect("\(error)".contains("#ffffff"), "\(error)")
        }
    }

    /// A user theme that cannot be read as UTF-8 is skipped silently: the
    /// built-in of the same name loads instead, or the error says "no such
    /// theme" while listing it as available.
    @Test func unreadableUserThemeIsReportedNotSkipped() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-audit-themes-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notUTF8 = Data([0x74, 0x68, 0xFF, 0xFE, 0x0A])
        _ = FileManager.default.createFile(atPath: directory + "/mine.theme", contents: notUTF8)
        _ = FileManager.default.createFile(atPath: directory + "/default.theme", contents: notUTF8)
        for name in ["mine", "default"] {
            do {
                let theme = try Theme.load(name, directories: [directory])
                Issue.record("\(name): loaded \(theme.name) (the built-in?) instead of reporting \(directory)/\(name).theme")
            } catch {
                #expect("\(error)".contains("\(name).theme") && "\(error)".contains("UTF-8"), "\(error)")
            }
        }
    }

    // MARK: Pipeline files

    /// `path: ~` and `path:` are YAML nulls ("no path": a temporary directory),
    /// and `path: ""` names no directory; they are taken as the home directory
    /// (`~` expanded) and the current directory, where the level writes its files.
    @Test(arguments: ["path: ~", "path:", "path: \"\""])
    func diskPathNullOrEmptyIsNotHomeOrCurrentDirectory(line: String) {
        let text = "levels:\n  - kind: disk\n    capacity: 1KiB\n    \(line)\n"
        do {
            let spec = try PipelineFile.parse(text, file: "audit.yaml")
            guard case .disk(let path, _) = spec.levels[0].kind else { Issue.record("not a disk level"); return }
            #expect(path == nil, "\(line) gave path \(String(describing: path)): the level would use \(URL(fileURLWithPath: ((path ?? "") as NSString).expandingTildeInPath).path)")
        } catch let error as PipelineFileError {
            #expect(error.line == 4 && error.field == "levels[0].path", "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// `name: ~` (YAML null) names a level "~" rather than leaving the default name.
    @Test func levelNameNullIsNotTheNameTilde() {
        do {
            let spec = try PipelineFile.parse("levels:\n  - kind: memory\n    capacity: 1KiB\n    name: ~\n", file: "audit.yaml")
            #expect(spec.levels[0].name != "~")
        } catch {
            #expect("\(error)".contains("audit.yaml:4"), "\(error)")
        }
    }
}

/// Collects output lines from `@Sendable` closures.
final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.lock(); lines.append(line); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return lines }
}
