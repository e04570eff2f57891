import Foundation

/// Parses the trace commands: `record FILE`, `record stop`,
/// `replay FILE [SPEED|max]` and `load trace FILE [RATE|max]`. A FILE is
/// one word (no spaces); `~/` is the home directory.
public enum TraceCommands {
    static func record(_ words: [String]) throws(CommandError) -> Command {
        guard words.count == 1 else { throw CommandError("usage: record FILE | record stop") }
        if words[0].lowercased() == "stop" { return .recordStop }
        return .record(path: try path(words[0]))
    }

    static func replay(_ words: [String]) throws(CommandError) -> Command {
        guard words.count == 1 || words.count == 2 else {
            throw CommandError("usage: replay FILE [SPEED|max] (SPEED a multiplier such as 2 or 0.5; default 1)")
        }
        return .replay(path: try path(words[0]), speed: words.count == 2 ? try speed(words[1]) : 1)
    }

    /// `load trace FILE [RATE|max]` (the words after `trace`).
    static func loadTrace(_ words: [String]) throws(CommandError) -> Command {
        guard words.count == 1 || words.count == 2 else {
            throw CommandError("usage: load trace FILE [RATE|max] (RATE gets per second; default max)")
        }
        var rate: Int?
        if words.count == 2 && words[1].lowercased() != "max" {
            guard let value = Int(words[1]), (1...10_000_000).contains(value) else {
                throw CommandError("RATE (gets per second) must be from 1 to 10000000 or max, got '\(words[1])'")
            }
            rate = value
        }
        return .loadTrace(path: try path(words[0]), rate: rate)
    }

    /// A replay speed: a multiplier from 0.001 to 1000, or `max` (nil).
    public static func speed(_ word: String) throws(CommandError) -> Double? {
        if word.lowercased() == "max" { return nil }
        let number = word.hasSuffix("x") || word.hasSuffix("×") ? String(word.dropLast()) : word
        guard let value = Double(number), value.isFinite, (0.001...1000).contains(value) else {
            throw CommandError("SPEED must be a multiplier from 0.001 to 1000 (such as 2 or 0.5) or max, got '\(word)'")
        }
        return value
    }

    static func path(_ word: String) throws(CommandError) -> String {
        if word.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw CommandError("file name contains control characters")
        }
        if word == "~" || word.hasPrefix("~/"), let home = ProcessInfo.processInfo.environment["HOME"] {
            return home + word.dropFirst()
        }
        return word
    }
}

extension Command {
    /// Whether the command starts a replay (`replay`, `load trace`).
    public var isReplay: Bool {
        switch self {
        case .replay, .loadTrace: true
        default: false
        }
    }
}
