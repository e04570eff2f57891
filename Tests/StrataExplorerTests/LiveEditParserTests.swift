import Foundation
import Strata
@testable import StrataExplorer
import StrataTestSupport
import Testing

/// The live-edit and file commands as typed: their forms, their one-line
/// errors, "did you mean", completion and help; fuzzed arguments.
@Suite struct LiveEditParserTests {
    @Test func theFormsParse() throws {
        #expect(try CommandParser.parse("set-capacity L1 100") == .setCapacity(level: "L1", capacity: .entries(100)))
        #expect(try CommandParser.parse("set-capacity L1 64KiB") == .setCapacity(level: "L1", capacity: .bytes(65_536)))
        #expect(try CommandParser.parse("set-capacity L1 512B") == .setCapacity(level: "L1", capacity: .bytes(512)))
        #expect(try CommandParser.parse("set-ttl L1 30s") == .setTTL(level: "L1", ttl: .seconds(30)))
        #expect(try CommandParser.parse("set-ttl L1 NONE") == .setTTL(level: "L1", ttl: nil))
        #expect(try CommandParser.parse("SET-POLICY L1 LRU") == .setPolicy(level: "L1", policy: .lru))
        #expect(try CommandParser.parse("set-policy L1 adaptive") == .setPolicy(level: "L1", policy: .adaptive))
        #expect(try CommandParser.parse("reload") == .reload)
        #expect(try CommandParser.parse("save ~/p.yaml") == .save(path: "~/p.yaml"))
        #expect(try CommandParser.parse("export out.JSON") == .export(path: "out.JSON"))
        #expect(try CommandParser.parse("export out.csv") == .export(path: "out.csv"))
    }

    @Test(arguments: [
        ("set-capacity L1", "usage: set-capacity LEVEL N|SIZE"),
        ("set-capacity L1 0", "N entries must be from 1 to 100000000, got '0'"),
        ("set-capacity L1 999999999999999999999", "N entries must be from 1"),
        ("set-capacity L1 0KiB", "a capacity must be above 0"),
        ("set-capacity L1 lots", "expected N entries or a size such as 64KiB, got 'lots'"),
        ("set-capacity L1 -5", "expected N entries or a size such as 64KiB, got '-5'"),
        ("set-capacity L1 2PiB", "expected N entries or a size"),
        ("set-capacity L1 9000000GiB", "is over the maximum of 1 PiB"),
        ("set-ttl L1", "usage: set-ttl LEVEL DURATION|none"),
        ("set-ttl L1 soon", "expected a duration such as 500ms, 30s or 5m, or none, got 'soon'"),
        ("set-ttl L1 0s", "expected a duration"),
        ("set-policy L1 fifo", "expected lru or adaptive, got 'fifo'"),
        ("set-policy L1", "usage: set-policy LEVEL lru|adaptive"),
        ("reload now", "reload takes no arguments"),
        ("save", "usage: save FILE"),
        ("save a b", "usage: save FILE (one path, no spaces)"),
        ("export stats.txt", "export: FILE must end in .json or .csv, got 'stats.txt'"),
        ("export stats", "export: FILE must end in .json or .csv, got 'stats'"),
        ("export a\u{1B}[2J.csv", "FILE contains control characters"),
    ])
    func badFormsSayWhatIsWrongInOneLine(line: String, message: String) {
        #expect {
            try CommandParser.parse(line)
        } throws: { error in
            let text = (error as? CommandError)?.message ?? ""
            return text.contains(message) && !text.contains("\n")
        }
    }

    @Test func didYouMeanNamesTheNewCommands() {
        for (typed, meant) in [("set-capcity", "set-capacity"), ("set-tll", "set-ttl"), ("set-polcy", "set-policy"),
                               ("relaod", "reload"), ("exprot", "export"), ("svae", "save")] {
            #expect(throws: CommandError("unknown command '\(typed)': did you mean '\(meant)'? (try help)")) {
                try CommandParser.parse("\(typed) x")
            }
        }
    }

    @Test func completionAndHelpListThem() {
        let completion = Completion(levels: ["L1", "L2", "origin"])
        #expect(completion.candidates(before: "set-p").names == ["set-policy"])
        #expect(completion.candidates(before: "set-").names == ["set-capacity", "set-ttl", "set-policy"])
        #expect(completion.candidates(before: "re").names == ["record", "replay", "resume", "reset", "reload"])
        #expect(completion.candidates(before: "set-capacity L").names == ["L1", "L2"])
        #expect(completion.candidates(before: "set-policy L1 ").names == ["lru", "adaptive"])
        #expect(completion.candidates(before: "set-ttl L1 n").names == ["none"])
        // Compare mode: a level with its side (`B:L1`), or plain for both.
        let sided = Completion(levels: Completion.sided(["L1", "origin"], ["L1", "L2", "origin"]))
        #expect(sided.candidates(before: "set-capacity B").names == ["B:L1", "B:L2", "B:origin"])
        #expect(sided.candidates(before: "clear L").names == ["L1", "L2"])
        #expect(sided.candidates(before: "set-capacity A:").names == ["A:L1", "A:origin"])
        #expect(completion.candidates(before: "ex").names == ["export"])
        let help = Command.reference.map(\.syntax)
        for verb in LiveEditParser.verbs { #expect(help.contains { $0.hasPrefix(verb) }, "help lacks \(verb)") }
    }

    /// Random arguments never crash the parsers: each line parses to the
    /// command its verb names, or is refused with one line.
    @Test func fuzzedArgumentsParseOrAreRefusedInOneLine() {
        var random = SeededGenerator(seed: 35)
        let pieces = ["L1", "64", "64KiB", "1.5MB", "0", "-1", "none", "lru", "adaptive", "30s", "1e9s", "∞", "é",
                      "x.json", "y.csv", ".csv", "KiB", "99999999999999999999", "\t", " ", "\u{301}", "ms", "1h"]
        for _ in 0..<5_000 {
            let verb = random.pick(LiveEditParser.verbs)
            var line = verb
            for _ in 0..<random.int(0..<4) {
                if random.chance(0.3) {
                    let scalars = (0..<random.int(1..<6)).compactMap { _ in Unicode.Scalar(UInt32(random.int(0x20..<0x2FF))) }
                    line += " " + String(String.UnicodeScalarView(scalars))
                } else {
                    line += " " + random.pick(pieces)
                }
            }
            do {
                let command = try CommandParser.parse(line)
                switch (verb, command) {
                case ("set-capacity", .setCapacity(_, let capacity)):
                    switch capacity {
                    case .entries(let n): #expect((1...LiveEditParser.maxEntries).contains(n), "\(line)")
                    case .bytes(let n): #expect(n > 0 && n <= Units.maxBytes, "\(line)")
                    }
                case ("set-ttl", .setTTL(_, let ttl)): #expect(ttl.map { $0 > .zero } ?? true, "\(line)")
                case ("set-policy", .setPolicy), ("reload", .reload), ("save", .save): break
                case ("export", .export(let path)): #expect(ExportFormat(path: path) != nil, "\(line)")
                default: Issue.record("\(line) parsed as \(command)")
                }
            } catch {
                #expect(!error.message.isEmpty && !error.message.contains("\n"), "\(line)")
            }
        }
    }
}
