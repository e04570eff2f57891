/// Everything one frame shows. The renderer is a pure function of this value.
public struct ViewState: Equatable, Sendable {
    public var title: String
    public var panes: [PaneState]
    public var events: [EventLine]
    public var status: CommandOutcome
    /// The text after `:` while the command line is open.
    public var commandLine: String?
    /// Characters after the command line's cursor (0: at the end).
    public var commandCursor: Int
    public var showHelp: Bool
    /// The first help line shown when the overlay does not fit.
    public var helpScroll: Int
    public var paused: Bool
    public var hz: Int
    public var workload: String?
    public var theme: String

    public init(title: String, panes: [PaneState], events: [EventLine] = [], status: CommandOutcome = CommandOutcome(""),
                commandLine: String? = nil, commandCursor: Int = 0, showHelp: Bool = false, helpScroll: Int = 0, paused: Bool = false, hz: Int = 10,
                workload: String? = nil, theme: String = "default") {
        self.title = title
        self.panes = panes
        self.events = events
        self.status = status
        self.commandLine = commandLine
        self.commandCursor = commandCursor
        self.showHelp = showHelp
        self.helpScroll = helpScroll
        self.paused = paused
        self.hz = hz
        self.workload = workload
        self.theme = theme
    }
}

/// Single keys, in the order help lists them.
public enum KeyHelp {
    public static let keys: [(key: String, meaning: String)] = [
        (":", "command line: Enter runs, Esc cancels, ↑/↓ history, Tab"),
        ("←/→ ^A ^E ^U ^W ^K", "edit it: move, start, end, cut to start, word, to end"),
        ("g", "get a key (:get )"),
        ("s", "set a key (:set )"),
        ("d", "remove a key (:rm )"),
        ("c", "clear levels (:clear )"),
        ("w", "memory warning to every level"),
        ("1-9", "flip condition toggle 1-9"),
        ("l", "start a zipf workload (:load zipf 1000 2000)"),
        ("x", "stop the workload"),
        ("p", "pause / resume the figures"),
        ("r", "reset counters"),
        ("+ / -", "faster / slower refresh"),
        ("t", "next colour theme"),
        ("Ctrl-L", "redraw the screen"),
        ("? h F1", "this help (Esc or ? closes; ↑/↓ PgUp/PgDn scroll)"),
        ("q Ctrl-C", "quit"),
    ]

    public static let footer: [(key: String, label: String)] = [
        (":", "cmd"), ("g", "get"), ("s", "set"), ("w", "warn"), ("1-9", "toggle"), ("l", "load"),
        ("x", "stop"), ("p", "pause"), ("?", "help"), ("q", "quit"),
    ]
}
