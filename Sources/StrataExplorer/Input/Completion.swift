/// Tab completion on the `:` line: the first word against the commands, the
/// second against what that command takes (level names after `clear`, toggle
/// names after `toggle`, theme names after `theme`, patterns after `load`).
public struct Completion: Equatable, Sendable {
    public var levels: [String]
    public var toggles: [String]
    public var themes: [String]

    public init(levels: [String] = [], toggles: [String] = [], themes: [String] = []) {
        self.levels = levels
        self.toggles = toggles
        self.themes = themes
    }

    /// The command words, in help order.
    public static let verbs = ["get", "set", "rm", "clear", "warn", "toggle", "load", "record", "replay", "sample", "pause", "resume", "reset",
                               "theme", "hz", "help", "quit"] + LiveEditParser.verbs

    /// What the word being typed at the end of `prefix` may become.
    /// The names compare mode takes for sides A and B: each plain (both
    /// sides), then with its side (`A:L1`, `B:L1`).
    public static func sided(_ a: [String], _ b: [String]) -> [String] {
        Array(Set(a + b)).sorted() + a.map { "A:" + $0 } + b.map { "B:" + $0 }
    }

    public func candidates(before prefix: Substring) -> (word: Substring, names: [String]) {
        let wordStart = prefix.lastIndex(of: " ").map { prefix.index(after: $0) } ?? prefix.startIndex
        let word = prefix[wordStart...]
        let earlier = prefix[..<wordStart].split(separator: " ")
        let pool: [String]
        switch earlier.count {
        case 0: pool = Self.verbs
        case 1:
            switch earlier[0].lowercased() {
            case "clear", "set-capacity", "set-ttl", "set-policy": pool = levels
            case "toggle": pool = toggles
            case "theme": pool = themes
            case "load": pool = LoadPattern.allCases.map(\.rawValue) + ["trace", "stop"]
            default: pool = []
            }
        case 2: pool = LiveEditParser.thirdWords[earlier[0].lowercased()] ?? []
        default: pool = []
        }
        return (word, pool.filter { $0.lowercased().hasPrefix(word.lowercased()) })
    }

    /// Completes the word before the cursor: a single candidate in full (and a
    /// space), several to their longest common prefix, spelt as the candidate
    /// is (names match case-insensitively). Returns the candidates
    /// when more than one remains (to be listed), else an empty array.
    public func complete(_ editor: inout LineEditor) -> [String] {
        let (word, names) = candidates(before: editor.beforeCursor)
        guard let first = names.first else { return [] }
        if names.count == 1 {
            editor.replaceBeforeCursor(from: word.startIndex, with: first + " ")
            return []
        }
        var common = first
        for name in names.dropFirst() {
            while !name.lowercased().hasPrefix(common.lowercased()) { common.removeLast() }
        }
        if common.count > word.count { editor.replaceBeforeCursor(from: word.startIndex, with: common) }
        return names
    }
}
