@testable import StrataExplorer
import Testing

@Suite struct CommandParserTests {
    @Test func aTypoSuggestsTheCommandMeant() {
        func message(_ line: String) -> String {
            do { _ = try CommandParser.parse(line); return "parsed" } catch { return "\(error)" }
        }
        #expect(message("lod zipf 10 10") == "unknown command 'lod': did you mean 'load'? (try help)")
        #expect(message("stet k v") == "unknown command 'stet': did you mean 'set'? (try help)")
        #expect(message("toggel disk") == "unknown command 'toggel': did you mean 'toggle'? (try help)")
        #expect(message("th light") == "unknown command 'th': did you mean 'theme'? (try help)")
        #expect(message("frobnicate") == "unknown command 'frobnicate' (try help)", "nothing close: no guess")
    }

    @Test func parsesEveryCommand() throws {
        #expect(try CommandParser.parse("get user:7") == .get(key: "user:7"))
        #expect(try CommandParser.parse("  GET  k ") == .get(key: "k"))
        #expect(try CommandParser.parse("set k hello  world") == .set(key: "k", value: "hello  world"))
        #expect(try CommandParser.parse("rm k") == .remove(key: "k"))
        #expect(try CommandParser.parse("clear") == .clear(level: nil))
        #expect(try CommandParser.parse("clear L2") == .clear(level: "L2"))
        #expect(try CommandParser.parse("warn") == .warn)
        #expect(try CommandParser.parse("toggle disk") == .toggle(name: "disk"))
        #expect(try CommandParser.parse("load zipf 1000 5000") == .load(pattern: .zipf, keys: 1000, rate: 5000, seconds: nil))
        #expect(try CommandParser.parse("load loop 10 20 1.5") == .load(pattern: .loop, keys: 10, rate: 20, seconds: 1.5))
        #expect(try CommandParser.parse("load stop") == .loadStop)
        #expect(try CommandParser.parse("pause") == .pause)
        #expect(try CommandParser.parse("resume") == .resume)
        #expect(try CommandParser.parse("reset") == .reset)
        #expect(try CommandParser.parse("theme light") == .theme(name: "light"))
        #expect(try CommandParser.parse("hz 30") == .hz(30))
        #expect(try CommandParser.parse("help") == .help)
        #expect(try CommandParser.parse("quit") == .quit)
    }

    @Test(arguments: [
        ("", "empty command (try help)"),
        ("frobnicate now", "unknown command 'frobnicate' (try help)"),
        ("get", "missing KEY: get KEY"),
        ("get a b", "get takes one KEY (keys have no spaces)"),
        ("set k", "missing VALUE: set KEY VALUE"),
        ("load zipf", "usage: load zipf|uniform|loop KEYS RATE [SECONDS] | load trace FILE [RATE] | load stop"),
        ("load pareto 10 10", "unknown load pattern 'pareto' (zipf, uniform or loop)"),
        ("load zipf ten 10", "KEYS must be a whole number from 1 to 10000000, got 'ten'"),
        ("load zipf 10 0", "RATE (gets per second) must be from 1 to 10000000, got '0'"),
        ("load zipf 10 10 -1", "SECONDS must be a number above 0, got '-1'"),
        ("hz 1000", "usage: hz N (1-60)"),
        ("warn now", "warn takes no arguments"),
        ("get \u{1B}[31mred", "key contains control characters; keys are printable text"),
    ])
    func badInputGetsAOneLineMessage(input: String, message: String) {
        #expect(throws: CommandError(message)) { try CommandParser.parse(input) }
    }

    @Test func hugeInputIsRefusedNotParsed() {
        let huge = "set k " + String(repeating: "x", count: CommandParser.maxLength)
        #expect(throws: CommandError.self) { try CommandParser.parse(huge) }
        let longKey = "get " + String(repeating: "k", count: 5000)
        #expect(throws: CommandError("key too long (5000 bytes; the limit is 4096)")) { try CommandParser.parse(longKey) }
    }
}

@Suite struct InputControllerTests {
    func type(_ text: String, into input: inout InputController) -> [InputAction] {
        text.flatMap { input.handle(.character($0)) }
    }

    @Test func commandLineRunsEditsAndCancels() {
        var input = InputController()
        #expect(input.handle(.character(":")).isEmpty)
        #expect(input.commandLine == "")
        _ = type("get user:1", into: &input)
        #expect(input.commandLine == "get user:1")
        _ = input.handle(.backspace)
        _ = type("2", into: &input)
        #expect(input.handle(.enter) == [.run(.get(key: "user:2"))])
        #expect(input.commandLine == nil)
        _ = input.handle(.character(":"))
        _ = type("bogus", into: &input)
        #expect(input.handle(.enter) == [.error("unknown command 'bogus' (try help)")])
        _ = input.handle(.character("g"))
        #expect(input.commandLine == "get ")
        _ = input.handle(.escape)
        #expect(input.commandLine == nil)
    }

    @Test func historyWalksBackAndForth() {
        var input = InputController()
        for command in ["get a", "get b"] {
            _ = input.handle(.character(":"))
            _ = type(command, into: &input)
            _ = input.handle(.enter)
        }
        _ = input.handle(.character(":"))
        _ = type("dra", into: &input)
        _ = input.handle(.up)
        #expect(input.commandLine == "get b")
        _ = input.handle(.up)
        #expect(input.commandLine == "get a")
        _ = input.handle(.up)
        #expect(input.commandLine == "get a")
        _ = input.handle(.down)
        #expect(input.commandLine == "get b")
        _ = input.handle(.down)
        #expect(input.commandLine == "dra")
    }

    @Test func singleKeys() {
        var input = InputController()
        #expect(input.handle(.character("w")) == [.run(.warn)])
        #expect(input.handle(.character("3")) == [.flipToggle(index: 2)])
        #expect(input.handle(.character("0")).isEmpty)
        #expect(input.handle(.character("p")) == [.run(.pause)])
        #expect(input.handle(.character("q")) == [.run(.quit)])
        #expect(input.handle(.interrupt) == [.run(.quit)])
        #expect(input.handle(.character("+")) == [.faster])
        #expect(input.handle(.resize) == [.redraw])
        _ = input.handle(.character("?"))
        #expect(input.showHelp)
        #expect(input.handle(.character("w")).isEmpty, "help swallows keys")
        _ = input.handle(.escape)
        #expect(!input.showHelp)
    }
}
