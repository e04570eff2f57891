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
    /// The recording under way (`REC t.trace 120`), if any.
    public var recording: String?
    /// What the fail-safe did (`fail-safe: 3 stale · 1 timed out`), when the pipeline has one.
    public var resilience: String?
    public var theme: String
    /// The focused pane (highlighted; `z` zooms it), if any.
    public var focus: Focus?
    public var zoomed: Bool
    /// One line per level (deep pipelines) instead of a pane each.
    public var compact: Bool
    /// The selected event (0 the newest of `events`), marked when the log has focus.
    public var eventSelection: Int
    /// The filter `events` went through, and how many events there are in all.
    public var eventFilter: String?
    public var eventTotal: Int
    /// The `/` line being typed, with its cursor.
    public var filterLine: String?
    public var filterCursor: Int
    /// The event whose detail is open.
    public var detail: EventLine?
    /// The key inspector, while it is open (it takes the panes' and the log's rows).
    public var inspector: InspectorView?
    /// Compare mode: B's panes and the comparison strip (`panes` are A's).
    public var comparison: ComparisonView?

    public init(title: String, panes: [PaneState], events: [EventLine] = [], status: CommandOutcome = CommandOutcome(""),
                commandLine: String? = nil, commandCursor: Int = 0, showHelp: Bool = false, helpScroll: Int = 0, paused: Bool = false, hz: Int = 10,
                workload: String? = nil, theme: String = "default", focus: Focus? = nil, zoomed: Bool = false, compact: Bool = false,
                eventSelection: Int = 0, eventFilter: String? = nil, eventTotal: Int? = nil, filterLine: String? = nil,
                filterCursor: Int = 0, detail: EventLine? = nil, resilience: String? = nil, inspector: InspectorView? = nil, recording: String? = nil,
                comparison: ComparisonView? = nil) {
        self.inspector = inspector
        self.comparison = comparison
        self.recording = recording
        self.title = title
        self.resilience = resilience
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
        self.focus = focus
        self.zoomed = zoomed
        self.compact = compact
        self.eventSelection = eventSelection
        self.eventFilter = eventFilter
        self.eventTotal = eventTotal ?? events.count
        self.filterLine = filterLine
        self.filterCursor = filterCursor
        self.detail = detail
    }
}

/// Single keys, in the order help lists them: drawn from ``KeyBinding/table``.
public enum KeyHelp {
    public static var keys: [(key: String, meaning: String)] {
        KeyBinding.documented.map { ($0.keys.joined(separator: " "), $0.meaning) }
    }

    public static var footer: [(key: String, label: String)] { KeyBinding.table.compactMap(\.footer) }

    /// The footer while the key inspector is open.
    public static let inspectorFooter: [(key: String, label: String)] = [
        ("Enter", "value"), ("/", "filter"), ("s", "sort"), ("S", "reverse"), ("Esc", "back"), ("?", "help"), ("q", "back"),
    ]
}
