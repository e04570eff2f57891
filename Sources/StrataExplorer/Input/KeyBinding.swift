/// One key binding of the explorer's normal mode. The bindings are declared
/// once, in ``table``: the dispatch (``InputController``), the footer hints,
/// the help overlay and the key table in docs/explorer.md all come from it
/// (a test fails when docs/explorer.md disagrees), as lazygit makes its
/// cheat sheet from its bindings.
public struct KeyBinding: Sendable {
    /// What a binding does.
    public enum Action: Equatable, Sendable {
        /// Opens the command line with this text.
        case open(String)
        case run(Command)
        /// `1`–`9`: flips the toggle of the digit pressed.
        case flipToggle
        case cycleTheme, faster, slower, help, redraw
        case focusNext, focusPrevious, down, up, pageDown, pageUp, newest
        /// Compare mode: focus side A's (left) or side B's (right) level of the same row.
        case sideA, sideB
        case zoom, compact, filter, clearFocused, detail, back
        /// Documented here, handled by the line being edited (editing keys).
        case lineEditing
        /// Documented here, handled by the key inspector (``InspectorInput``).
        case inspector

        /// Whether the binding also works while the key inspector is open.
        var worksOverInspector: Bool {
            switch self {
            case .open(""), .help, .faster, .slower, .cycleTheme, .redraw, .run(.pause): true
            default: false
            }
        }
    }

    /// The keys as shown (help, docs/explorer.md): `["Tab", "S-Tab"]`.
    public let keys: [String]
    public let meaning: String
    /// The footer hint (key, label), if the binding has one; in table order.
    public let footer: (key: String, label: String)?
    /// The keys that trigger it in normal mode.
    public let triggers: [KeyPress]
    public let action: Action

    init(_ keys: [String], _ meaning: String, footer: (String, String)? = nil, triggers: [KeyPress], _ action: Action) {
        self.keys = keys
        self.meaning = meaning
        self.footer = footer.map { (key: $0.0, label: $0.1) }
        self.triggers = triggers
        self.action = action
    }

    static func chars(_ text: String) -> [KeyPress] { text.map { .character($0) } }

    /// Every binding, in the order help and docs/explorer.md list them.
    public static let table: [KeyBinding] = [
        KeyBinding([":"], "command line: Enter runs, Esc cancels, ↑/↓ history, Tab completes (level names as spelt, matched in any case)", footer: (":", "cmd"),
                   triggers: chars(":"), .open("")),
        KeyBinding(["←", "→", "Home", "End", "^A", "^E", "^U", "^W", "^K"],
                   "on the command line: move, start, end, delete to start, word back, to end",
                   triggers: [], .lineEditing),
        KeyBinding(["Tab", "S-Tab"], "focus the next / previous pane", footer: ("Tab", "focus"),
                   triggers: [.tab], .focusNext),
        KeyBinding([], "", triggers: [.backTab], .focusPrevious),
        KeyBinding(["j", "↓"], "next pane down; log: older event; inspector: next key", triggers: chars("j") + [.down], .down),
        KeyBinding(["k", "↑"], "next pane up; log: newer event; inspector: previous key", triggers: chars("k") + [.up], .up),
        KeyBinding(["←", "→"], "compare mode: focus A's / B's level of the same row", triggers: [.left], .sideA),
        KeyBinding([], "", triggers: [.right], .sideB),
        KeyBinding(["PgDn", "PgUp"], "scroll the event log (it takes the focus)", triggers: [.pageDown], .pageDown),
        KeyBinding([], "", triggers: [.pageUp], .pageUp),
        KeyBinding(["Home"], "the newest event (the log focused)", triggers: [.home], .newest),
        KeyBinding(["z"], "zoom the focused pane (z or Esc again: back)", triggers: chars("z"), .zoom),
        KeyBinding(["v"], "one line per level (deep pipelines) or a pane each", triggers: chars("v"), .compact),
        KeyBinding(["/"], "filter the log, or the inspector's keys (Esc clears)", footer: ("/", "filter"),
                   triggers: chars("/"), .filter),
        KeyBinding(["Enter"], "event in full (log), key inspector (level), value (key)",
                   triggers: [.enter], .detail),
        KeyBinding(["s", "S"], "in the inspector: next sort column, reverse the order",
                   triggers: [], .inspector),
        KeyBinding(["Esc"], "back: preview, filter, inspector, zoom, then log filter",
                   triggers: [.escape], .back),
        KeyBinding(["g"], "get a key (:get )", footer: ("g", "get"), triggers: chars("g"), .open("get ")),
        KeyBinding(["s"], "set a key (:set )", footer: ("s", "set"), triggers: chars("s"), .open("set ")),
        KeyBinding(["d"], "remove a key (:rm )", triggers: chars("d"), .open("rm ")),
        KeyBinding(["c"], "clear the focused level (:clear L1, Enter confirms), or choose; all asks y/n", triggers: chars("c"),
                   .clearFocused),
        KeyBinding(["w"], "memory warning to every level", footer: ("w", "warn"), triggers: chars("w"), .run(.warn)),
        KeyBinding(["1-9"], "flip condition toggle 1-9", footer: ("1-9", "toggle"), triggers: chars("123456789"), .flipToggle),
        KeyBinding(["l"], "start a zipf workload (:load zipf 1000 2000)", footer: ("l", "load"), triggers: chars("l"),
                   .open("load zipf 1000 2000")),
        KeyBinding(["x"], "stop the workload", footer: ("x", "stop"), triggers: chars("x"), .run(.loadStop)),
        // The app turns pause into resume when paused.
        KeyBinding(["p"], "pause / resume the figures", footer: ("p", "pause"), triggers: chars("p"), .run(.pause)),
        KeyBinding(["r"], "reset counters", triggers: chars("r"), .run(.reset)),
        KeyBinding(["+", "-"], "faster / slower refresh", triggers: chars("+="), .faster),
        KeyBinding([], "", triggers: chars("-"), .slower),
        KeyBinding(["t"], "next colour theme", triggers: chars("t"), .cycleTheme),
        KeyBinding(["Ctrl-L"], "redraw the screen", triggers: [], .redraw),
        // Handled by the app before the bindings (it needs the terminal).
        KeyBinding(["Ctrl-Z"], "suspend to the shell (fg brings it back)", triggers: [], .redraw),
        KeyBinding(["?", "h", "F1"], "this help (Esc or ? closes; ↑/↓ PgUp/PgDn scroll)", footer: ("?", "help"),
                   triggers: chars("?h") + [.help], .help),
        KeyBinding(["q", "Ctrl-C"], "quit", footer: ("q", "quit"), triggers: chars("q"), .run(.quit)),
    ]

    /// The bindings help and the README show (those with keys).
    public static var documented: [KeyBinding] { table.filter { !$0.keys.isEmpty } }

    /// The binding `key` triggers in normal mode.
    public static func binding(for key: KeyPress) -> KeyBinding? { table.first { $0.triggers.contains(key) } }

    /// The README's key table, generated from ``table``.
    public static var markdownTable: String {
        var lines = ["| key | does |", "|---|---|"]
        for binding in documented {
            let keys = binding.keys.map { "`\($0)`" }.joined(separator: " ")
            lines.append("| \(keys) | \(binding.meaning.replacingOccurrences(of: "|", with: "\\|")) |")
        }
        return lines.joined(separator: "\n")
    }
}
