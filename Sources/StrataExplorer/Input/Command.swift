import Strata

/// Workload shapes for `load`.
public enum LoadPattern: String, Sendable, Equatable, CaseIterable {
    /// Zipf-distributed keys (s = 0.99): a few hot keys, a long tail.
    case zipf
    /// Every key equally likely.
    case uniform
    /// key-0, key-1, … in order, wrapping: the worst case for LRU.
    case loop
}

/// One explorer command, typed at `:` or read from a script.
public enum Command: Sendable, Equatable {
    case get(key: String)
    case set(key: String, value: String)
    case remove(key: String)
    case clear(level: String?)
    case warn
    case toggle(name: String)
    case load(pattern: LoadPattern, keys: Int, rate: Int, seconds: Double?)
    case loadStop
    /// Writes every request the explorer makes to a trace file (`record FILE`).
    case record(path: String)
    case recordStop
    /// Replays a strata trace as a workload; `speed` nil: as fast as possible.
    case replay(path: String, speed: Double?)
    /// Replays a LIRS or one-key-per-line file as gets at `rate` a second (nil: as fast as possible).
    case loadTrace(path: String, rate: Int?)
    /// Logs one workload get in N into the event log (0: none).
    case sample(Int)
    case pause
    case resume
    case reset
    case theme(name: String)
    case hz(Int)
    case help
    case quit
    /// Resizes a memory level in place (`set-capacity LEVEL N|SIZE`).
    case setCapacity(level: String, capacity: CapacitySetting)
    /// Rebuilds a memory level with another TTL (`nil`: none), its entries kept.
    case setTTL(level: String, ttl: Duration?)
    /// Rebuilds a memory level under another eviction policy, its entries kept.
    case setPolicy(level: String, policy: EvictionPolicy)
    /// Re-reads the pipeline file and applies what can change live.
    case reload
    /// Writes the running pipeline (edits included) as a pipeline file.
    case save(path: String)
    /// Writes each level's counters and settings as JSON or CSV (by the extension).
    case export(path: String)

    /// Every command with its syntax, for help and errors.
    public static let reference: [(syntax: String, meaning: String)] = [
        ("get KEY", "read KEY; the event log shows its path"),
        ("set KEY VALUE", "write VALUE (rest of the line) to every level"),
        ("rm KEY", "remove KEY from every level"),
        ("clear [LEVEL]", "empty one level, or all of them"),
        ("warn", "send a memory warning to every level"),
        ("toggle NAME", "switch a level condition on or off"),
        ("load PATTERN KEYS RATE [SECS]", "background gets/s; PATTERN is zipf, uniform or loop"),
        ("load trace FILE [RATE|max]", "get each key of a LIRS or one-key-per-line file"),
        ("load stop", "stop the workload (or the replay)"),
        ("record FILE / record stop", "write every request to a strata trace file"),
        ("replay FILE [SPEED|max]", "replay a strata trace as the workload (SPEED a multiplier)"),
        ("sample N|auto", "log one workload get in N with its path (0: none; auto, the default: ~2/s)"),
        ("pause / resume", "freeze or resume the screen's figures"),
        ("reset", "zero every counter"),
        ("set-capacity LEVEL N|SIZE", "resize a memory level live: N entries, or SIZE bytes (64KiB)"),
        ("set-ttl LEVEL DURATION|none", "change a memory level's TTL live (entries kept, none outlives it)"),
        ("set-policy LEVEL lru|adaptive", "change a memory level's eviction policy live (entries kept)"),
        ("reload", "re-read the pipeline file; apply its capacity, count, ttl, policy"),
        ("save FILE", "write the pipeline as it runs now as a pipeline file"),
        ("export FILE.json|csv", "write each level's counters and settings"),
        ("theme NAME", "switch colour theme"),
        ("hz N", "redraws per second (1-60)"),
        ("help", "show keys and commands"),
        ("quit", "leave"),
    ]
}

/// A command line that could not be parsed.
public struct CommandError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public enum CommandParser {
    /// The longest command line accepted (a `set` value included).
    public static let maxLength = 1 << 20

    public static func parse(_ line: String) throws(CommandError) -> Command {
        guard line.utf8.count <= maxLength else {
            throw CommandError("command too long (\(line.utf8.count) bytes; the limit is \(maxLength))")
        }
        // Split by scalar: a word that begins with a combining mark joins the
        // blank before it into one Character, which a Character split never
        // takes for a separator (`set k \u{301}v` has the value `\u{301}v`).
        func isBlank(_ scalar: Unicode.Scalar) -> Bool { scalar == " " || scalar == "\t" }
        func text(_ scalars: Substring.UnicodeScalarView) -> String { String(Substring(scalars)) }
        let trimmed = line.unicodeScalars.drop(while: isBlank)
        guard !trimmed.isEmpty else { throw CommandError("empty command (try help)") }
        let verbEnd = trimmed.firstIndex(where: isBlank) ?? trimmed.endIndex
        let verb = text(trimmed[..<verbEnd]).lowercased()
        let rest = text(trimmed[verbEnd...].drop(while: isBlank))
        let words = rest.unicodeScalars.split(whereSeparator: isBlank).map(text)

        func key(_ usage: String) throws(CommandError) -> String {
            guard let first = words.first else { throw CommandError("missing KEY: \(usage)") }
            try validate(key: first)
            return first
        }
        func noArguments() throws(CommandError) {
            if !words.isEmpty { throw CommandError("\(verb) takes no arguments") }
        }

        switch verb {
        case "get", "g":
            let k = try key("get KEY")
            if words.count > 1 { throw CommandError("get takes one KEY (keys have no spaces)") }
            return .get(key: k)
        case "set", "s":
            let k = try key("set KEY VALUE")
            let afterKey = rest.unicodeScalars.dropFirst(k.unicodeScalars.count).drop(while: isBlank)
            guard !afterKey.isEmpty else { throw CommandError("missing VALUE: set KEY VALUE") }
            return .set(key: k, value: text(afterKey))
        case "rm", "remove", "del":
            let k = try key("rm KEY")
            if words.count > 1 { throw CommandError("rm takes one KEY") }
            return .remove(key: k)
        case "clear":
            if words.count > 1 { throw CommandError("clear takes at most one LEVEL") }
            return .clear(level: words.first)
        case "warn": try noArguments(); return .warn
        case "toggle", "t":
            guard words.count == 1 else { throw CommandError("usage: toggle NAME") }
            return .toggle(name: words[0])
        case "load":
            if words.first == "stop" && words.count == 1 { return .loadStop }
            if words.first?.lowercased() == "trace" { return try TraceCommands.loadTrace(Array(words.dropFirst())) }
            guard words.count == 3 || words.count == 4 else {
                throw CommandError("usage: load zipf|uniform|loop KEYS RATE [SECONDS] | load trace FILE [RATE] | load stop")
            }
            guard let pattern = LoadPattern(rawValue: words[0].lowercased()) else {
                throw CommandError("unknown load pattern '\(words[0])' (zipf, uniform or loop)")
            }
            guard let keys = Int(words[1]), (1...10_000_000).contains(keys) else {
                throw CommandError("KEYS must be a whole number from 1 to 10000000, got '\(words[1])'")
            }
            guard let rate = Int(words[2]), (1...10_000_000).contains(rate) else {
                throw CommandError("RATE (gets per second) must be from 1 to 10000000, got '\(words[2])'")
            }
            var seconds: Double?
            if words.count == 4 {
                guard let value = Double(words[3]), value > 0, value <= 86_400 else {
                    throw CommandError("SECONDS must be a number above 0, got '\(words[3])'")
                }
                seconds = value
            }
            return .load(pattern: pattern, keys: keys, rate: rate, seconds: seconds)
        case "sample":
            if words.count == 1 && words[0].lowercased() == "auto" { return .sample(ExplorerModel.autoSampling) }
            guard words.count == 1, let every = Int(words[0]), (0...10_000_000).contains(every) else {
                throw CommandError("usage: sample N|auto (log one workload get in N; 0: none; auto: about 2/s)")
            }
            return .sample(every)
        case "record": return try TraceCommands.record(words)
        case "replay": return try TraceCommands.replay(words)
        case "pause": try noArguments(); return .pause
        case "resume": try noArguments(); return .resume
        case "reset": try noArguments(); return .reset
        case "theme":
            guard words.count == 1 else { throw CommandError("usage: theme NAME") }
            return .theme(name: words[0])
        case "hz":
            guard words.count == 1, let hz = Int(words[0]), (1...60).contains(hz) else {
                throw CommandError("usage: hz N (1-60)")
            }
            return .hz(hz)
        case "set-capacity", "set-ttl", "set-policy", "reload", "save", "export":
            return try LiveEditParser.parse(verb, words)
        case "help", "?": return .help
        case "quit", "q", "exit": try noArguments(); return .quit
        default:
            if let guess = Self.closestVerb(to: verb) {
                throw CommandError("unknown command '\(String(verb.prefix(40)))': did you mean '\(guess)'? (try help)")
            }
            throw CommandError("unknown command '\(String(verb.prefix(40)))' (try help)")
        }
    }

    /// The commands' names, for "did you mean".
    static let verbs = ["get", "set", "rm", "remove", "clear", "warn", "toggle", "load", "record", "replay", "sample", "pause", "resume",
                        "reset", "theme", "hz", "help", "quit"] + LiveEditParser.verbs

    /// The command name `verb` is most likely a typo of: at most two edits
    /// away (one for names of up to four letters), or one it begins.
    static func closestVerb(to verb: String) -> String? {
        guard !verb.isEmpty, verb.count <= 40 else { return nil }
        if let started = verbs.first(where: { $0.hasPrefix(verb) && verb.count >= 2 }) { return started }
        let typed = Array(verb)
        let scored = verbs.map { ($0, editDistance(typed, Array($0))) }.min { $0.1 < $1.1 }
        guard let (best, distance) = scored, distance <= (best.count <= 4 ? 1 : 2) else { return nil }
        return best
    }

    /// Levenshtein distance, counting a swap of two neighbours as one edit.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }

    /// Keys are printable text: control characters (a pasted binary blob, an
    /// escape sequence) are refused rather than stored under a garbled name.
    public static func validate(key: String) throws(CommandError) {
        if key.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.value == 0x7F }) {
            throw CommandError("key contains control characters; keys are printable text")
        }
        if key.utf8.count > 4096 { throw CommandError("key too long (\(key.utf8.count) bytes; the limit is 4096)") }
    }
}
