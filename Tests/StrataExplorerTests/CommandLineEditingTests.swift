import Foundation
@testable import StrataExplorer
import Testing

/// Issue 10, item 4: the `:` line edits like a shell's, completes names and
/// keeps its history across runs.
@Suite struct CommandLineEditingTests {
    static func typing(_ text: String, into input: inout InputController) {
        for character in text { _ = input.handle(.character(character)) }
    }

    @Test func cursorKeysInsertInTheMiddle() {
        var input = InputController()
        _ = input.handle(.character(":"))
        Self.typing("get user7", into: &input)
        _ = input.handle(.left)
        Self.typing(":", into: &input)
        #expect(input.commandLine == "get user:7")
        #expect(input.commandCursor == 1)
        _ = input.handle(.home)
        _ = input.handle(.delete)
        Self.typing("G", into: &input)
        #expect(input.commandLine == "Get user:7")
        _ = input.handle(.end)
        _ = input.handle(.backspace)
        #expect(input.commandLine == "Get user:")
        _ = input.handle(.control("a"))
        _ = input.handle(.right)
        _ = input.handle(.right)
        _ = input.handle(.right)
        _ = input.handle(.control("k"))
        #expect(input.commandLine == "Get")
        _ = input.handle(.control("e"))
        #expect(input.commandCursor == 0)
    }

    @Test func controlUAndWDeleteBackwards() {
        var input = InputController()
        _ = input.handle(.character(":"))
        Self.typing("set key some value", into: &input)
        _ = input.handle(.control("w"))
        #expect(input.commandLine == "set key some ")
        _ = input.handle(.control("w"))
        #expect(input.commandLine == "set key ")
        _ = input.handle(.left)
        _ = input.handle(.left)
        _ = input.handle(.control("u"))
        #expect(input.commandLine == "y ")
        #expect(input.commandCursor == 2)
    }

    @Test func leftStopsAtTheStartAndRightAtTheEnd() {
        var input = InputController()
        _ = input.handle(.character(":"))
        Self.typing("ab", into: &input)
        for _ in 0..<5 { _ = input.handle(.left) }
        #expect(input.commandCursor == 2)
        for _ in 0..<5 { _ = input.handle(.right) }
        #expect(input.commandCursor == 0)
    }

    @Test func tabCompletesCommandsLevelsTogglesAndThemes() {
        var input = InputController()
        input.completion = Completion(levels: ["L1", "L2", "origin"], toggles: ["memory", "disk"],
                                      themes: ["default", "light", "high-contrast", "mono"])
        _ = input.handle(.character(":"))
        Self.typing("tog", into: &input)
        _ = input.handle(.tab)
        #expect(input.commandLine == "toggle ")
        Self.typing("d", into: &input)
        _ = input.handle(.tab)
        #expect(input.commandLine == "toggle disk ")
        _ = input.handle(.escape)

        _ = input.handle(.character(":"))
        Self.typing("clear o", into: &input)
        _ = input.handle(.tab)
        #expect(input.commandLine == "clear origin ")
        _ = input.handle(.escape)

        _ = input.handle(.character(":"))
        Self.typing("clear ", into: &input)
        let listed = input.handle(.tab)
        #expect(listed == [.hint("L1  L2  origin")], "several candidates are listed")
        Self.typing("L", into: &input)
        #expect(input.handle(.tab) == [.hint("L1  L2")])
        #expect(input.commandLine == "clear L")
        _ = input.handle(.escape)

        _ = input.handle(.character(":"))
        Self.typing("theme hi", into: &input)
        _ = input.handle(.tab)
        #expect(input.commandLine == "theme high-contrast ")
        _ = input.handle(.escape)

        _ = input.handle(.character(":"))
        Self.typing("re", into: &input)
        #expect(input.handle(.tab) == [.hint("record  replay  resume  reset  reload")])
        #expect(input.commandLine == "re")
        Self.typing("s", into: &input)
        #expect(input.handle(.tab) == [.hint("resume  reset")])
        #expect(input.commandLine == "res")
        _ = input.handle(.escape)
        _ = input.handle(.character(":"))
        Self.typing("se", into: &input)
        #expect(input.handle(.tab) == [.hint("set  set-capacity  set-ttl  set-policy")])
        #expect(input.commandLine == "set")
    }

    @Test func historyIsKeptAcrossRunsInAFile() throws {
        let root = NSTemporaryDirectory() + "strata-history-\(UUID().uuidString.prefix(8))"
        let path = root + "/strata/history"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let file = HistoryFile(path: path)
        #expect(file.load().isEmpty, "no file yet: no history")
        var first = InputController(history: file.load())
        for command in ["get a", "set b 1", "get a"] {
            _ = first.handle(.character(":"))
            Self.typing(command, into: &first)
            _ = first.handle(.enter)
        }
        file.save(first.history)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600, "history is private")

        var second = InputController(history: file.load())
        #expect(second.history == ["get a", "set b 1", "get a"])
        _ = second.handle(.character(":"))
        _ = second.handle(.up)
        #expect(second.commandLine == "get a")
        _ = second.handle(.up)
        #expect(second.commandLine == "set b 1")
    }

    @Test func aHistoryFileThatIsNotARegularFileOrTooLargeIsAnEmptyHistory() throws {
        let directory = NSTemporaryDirectory() + "strata-history-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A directory where the file belongs, and /dev/zero: refused, not read.
        #expect(HistoryFile(path: directory).load().isEmpty)
        #expect(HistoryFile(path: "/dev/zero").load().isEmpty)
        // Over the limit (sparse): refused by its size, not read into memory.
        let huge = directory + "/history"
        #expect(FileManager.default.createFile(atPath: huge, contents: Data("get a\n".utf8)))
        #expect(truncate(huge, off_t(HistoryFile.maxBytes) + 1) == 0)
        let loaded = HistoryFile(path: huge).load()
        #expect(loaded.isEmpty, "\(loaded.count) commands, \(loaded.map(\.utf8.count).reduce(0, +)) bytes")
    }

    @Test func historyKeepsTheNewestHundred() throws {
        let path = NSTemporaryDirectory() + "strata-history-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: path) }
        HistoryFile(path: path).save((1...150).map { "get k\($0)" })
        let loaded = HistoryFile(path: path).load()
        #expect(loaded.count == InputController.historyLimit)
        #expect(loaded.last == "get k150" && loaded.first == "get k51")
    }

    /// What save writes, load reads back: long commands (a pasted value)
    /// never make the file too large to load, which would lose the whole
    /// history at the next save (from a review). The newest commands that
    /// fit are kept; one larger than the file's limit on its own is not.
    @Test func aSavedHistoryAlwaysLoadsBackEvenWithLongCommands() throws {
        let path = NSTemporaryDirectory() + "strata-history-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let long = (1...30).map { "set k\($0) " + String(repeating: "v", count: 100_000) }
        let history = ["get first"] + long + ["set huge " + String(repeating: "x", count: HistoryFile.maxBytes), "get last"]
        HistoryFile(path: path).save(history)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? .max
        #expect(size <= HistoryFile.maxBytes, "\(size) bytes written")
        let loaded = HistoryFile(path: path).load()
        #expect(loaded.last == "get last", "the newest command is kept")
        #expect(!loaded.contains { $0.hasPrefix("set huge") }, "a command larger than the file is not saved")
        #expect(loaded.count >= 10 && loaded.dropLast().allSatisfy { $0.hasPrefix("set k") })
        #expect(Array(long.suffix(loaded.count - 1)) == Array(loaded.dropLast()), "the newest that fit, in order")
        // Saved again, and again: nothing more is lost.
        HistoryFile(path: path).save(loaded + ["get again"])
        let again = HistoryFile(path: path).load()
        #expect(again.last == "get again" && again.count >= loaded.count)
        #expect(Array(again.dropLast()) == Array(loaded.suffix(again.count - 1)))
    }

    @Test func controlKeysAndShiftTabAreParsed() {
        var parser = EscapeSequenceParser()
        #expect(parser.feed(1) == [.control("a")])
        #expect(parser.feed(23) == [.control("w")])
        #expect(parser.feed(9) == [.tab])
        #expect(parser.feed(3) == [.interrupt])
        #expect(parser.feed(27) + parser.feed(0x5B) + parser.feed(0x5A) == [.backTab])
    }

    @Test func theCursorIsDrawnWhereItIs() {
        var state = RendererTests.fixture()
        state.commandLine = "get user:42"
        state.commandCursor = 3
        let frame = Renderer(unicode: true).render(state, width: 80, height: 24)
        let row = frame.height - 2
        let line = (0..<frame.width).map { String(frame[$0, row].character) }.joined()
        #expect(line.hasPrefix(":get user:42 "), "no block glyph: the cursor is on a character: \(line)")
        #expect(frame[9, row].role == .cursor && frame[9, row].character == ":")
        #expect(frame[8, row].role == .command)
    }

    @Test func aLongLineShowsTheTextAroundTheCursor() {
        var state = RendererTests.fixture()
        state.commandLine = "set k " + String(repeating: "a", count: 200) + "M" + String(repeating: "b", count: 200)
        state.commandCursor = 201
        let frame = Renderer(unicode: true).render(state, width: 60, height: 24)
        let row = frame.height - 2
        let line = (0..<frame.width).map { String(frame[$0, row].character) }.joined()
        #expect(line.hasPrefix("…aaa"), "cut before the cursor: \(line)")
        #expect(line.contains("aM") && line.contains("bb…"), "cut after it: \(line)")
        let cursor = (0..<frame.width).first { frame[$0, row].role == .cursor }
        #expect(cursor.map { frame[$0, row].character } == "M")
    }
}
