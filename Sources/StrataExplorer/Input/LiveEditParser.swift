import Strata

/// What `set-capacity` sets: a memory level's count limit (a plain number)
/// or its byte capacity (a size with a unit, `64KiB`, `512B`).
public enum CapacitySetting: Equatable, Sendable {
    /// The most entries kept (a count limit).
    case entries(Int)
    /// The byte capacity.
    case bytes(Int)
}

/// Parses the live-edit and file commands (`set-capacity`, `set-ttl`,
/// `set-policy`, `reload`, `save`, `export`) for ``CommandParser``.
enum LiveEditParser {
    static let verbs = ["set-capacity", "set-ttl", "set-policy", "reload", "save", "export"]

    /// What completes the third word after a command and a level.
    static let thirdWords: [String: [String]] = [
        "set-policy": EvictionPolicy.allCases.map(\.rawValue),
        "set-ttl": ["none"],
    ]

    /// The largest count limit `set-capacity` takes (as a pipeline file's `count:`).
    static let maxEntries = 100_000_000

    static func parse(_ verb: String, _ words: [String]) throws(CommandError) -> Command {
        switch verb {
        case "set-capacity":
            guard words.count == 2 else {
                throw CommandError("usage: set-capacity LEVEL N|SIZE (N entries, or a size such as 64KiB)")
            }
            return .setCapacity(level: words[0], capacity: try capacity(words[1]))
        case "set-ttl":
            guard words.count == 2 else { throw CommandError("usage: set-ttl LEVEL DURATION|none (e.g. 30s, 5m)") }
            if words[1].lowercased() == "none" { return .setTTL(level: words[0], ttl: nil) }
            guard let ttl = Units.parseDuration(words[1]), ttl > .zero else {
                throw CommandError("set-ttl: expected a duration such as 500ms, 30s or 5m, or none, got '\(clipped(words[1]))'")
            }
            return .setTTL(level: words[0], ttl: ttl)
        case "set-policy":
            guard words.count == 2 else { throw CommandError("usage: set-policy LEVEL lru|adaptive") }
            guard let policy = EvictionPolicy(rawValue: words[1].lowercased()) else {
                throw CommandError("set-policy: expected lru or adaptive, got '\(clipped(words[1]))'")
            }
            return .setPolicy(level: words[0], policy: policy)
        case "reload":
            guard words.isEmpty else { throw CommandError("reload takes no arguments (it re-reads the file strata was started with)") }
            return .reload
        case "save":
            return .save(path: try path(words, usage: "save FILE"))
        default:
            let file = try path(words, usage: "export FILE.json|csv")
            guard ExportFormat(path: file) != nil else {
                throw CommandError("export: FILE must end in .json or .csv, got '\(clipped(file))'")
            }
            return .export(path: file)
        }
    }

    /// `N` entries (1 to ``maxEntries``) or a size with a unit (above 0, at most ``Units/maxBytes``).
    static func capacity(_ text: String) throws(CommandError) -> CapacitySetting {
        if text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            guard let entries = Int(text), (1...maxEntries).contains(entries) else {
                throw CommandError("set-capacity: N entries must be from 1 to \(maxEntries), got '\(clipped(text))'")
            }
            return .entries(entries)
        }
        let bytes: Int
        do throws(Units.BytesError) {
            bytes = try Units.bytes(text)
        } catch .tooLarge(let limit) {
            throw CommandError("set-capacity: '\(clipped(text))' is over the maximum of \(Units.exactBytes(limit))")
        } catch {
            throw CommandError("set-capacity: expected N entries or a size such as 64KiB, got '\(clipped(text))'")
        }
        guard bytes > 0 else { throw CommandError("set-capacity: a capacity must be above 0 (toggle a level to switch it off)") }
        return .bytes(bytes)
    }

    /// The one FILE argument: printable text, no spaces.
    static func path(_ words: [String], usage: String) throws(CommandError) -> String {
        guard words.count == 1 else { throw CommandError("usage: \(usage) (one path, no spaces)") }
        if words[0].unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw CommandError("FILE contains control characters; paths are printable text")
        }
        return words[0]
    }

    /// At most 40 characters of what the user typed, for a one-line message.
    static func clipped(_ text: String) -> String {
        text.count > 40 ? String(text.prefix(40)) + "…" : text
    }
}

extension Command {
    /// Why `strata --readonly` refuses this command (`nil`: allowed). Refused:
    /// whatever writes to a level, empties one or changes its configuration;
    /// gets, workloads of gets, toggles (they only route this explorer's
    /// reads), inspection, `save` and `export` (they write files, not levels) run.
    public var readOnlyRefusal: String? {
        let what: String
        switch self {
        case .set: what = "set writes to the levels"
        case .remove: what = "rm removes from the levels"
        case .clear: what = "clear empties levels"
        case .warn: what = "a memory warning empties levels"
        case .setCapacity(let level, _): what = "set-capacity changes \(level)'s configuration"
        case .setTTL(let level, _): what = "set-ttl changes \(level)'s configuration"
        case .setPolicy(let level, _): what = "set-policy changes \(level)'s configuration"
        case .reload: what = "reload changes the levels' configuration"
        case .replay: what = "replay repeats the trace's sets, removes and clears (load trace replays gets only)"
        case .get, .toggle, .load, .loadStop, .sample, .pause, .resume, .reset, .theme, .hz, .help, .quit, .save, .export,
             .record, .recordStop, .loadTrace:
            return nil
        }
        return "read-only: \(what) (strata was started with --readonly)"
    }
}
