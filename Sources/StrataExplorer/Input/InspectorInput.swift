/// The key inspector's input state: which level, the sort, the live `/`
/// filter, the selected row and whether its preview is open. Pure, like
/// ``InputController``, which holds it while the inspector is open.
public struct InspectorInput: Equatable, Sendable {
    /// The inspected level (index, top first).
    public var level: Int
    /// Its side in compare mode (A outside it).
    public var side: ComparisonModel.Side
    public var sort: InspectorColumn = .frequency
    public var descending = true
    /// Keys shown contain this (case-insensitive); it changes as the `/` line is typed.
    public var filter = ""
    /// The `/` line while it is open.
    public var filterLine: LineEditor?
    /// The selected row of the keys shown.
    public var selection = 0
    /// The selected key's preview is open.
    public var preview = false

    public init(level: Int, side: ComparisonModel.Side = .a) {
        self.level = level
        self.side = side
    }

    /// What a key did in the inspector.
    enum Outcome: Equatable {
        case handled([InputAction])
        /// The inspector closes.
        case close
        /// Not an inspector key: a normal binding may take it.
        case unhandled
    }

    /// Handles `key`: the `/` line first (every key typed narrows the keys
    /// at once), then the preview, then the table's keys.
    mutating func handle(_ key: KeyPress) -> Outcome {
        if var editor = filterLine {
            switch key {
            case .escape:
                filterLine = nil
                filter = ""
                selection = 0
                return .handled([])
            case .enter:
                filterLine = nil
                return .handled([])
            case .backspace where editor.text.isEmpty:
                filterLine = nil
                return .handled([])
            case .backspace: _ = editor.backspace()
            case .character(let c): if editor.text.utf8.count < 1024 { editor.insert(c) }
            default: _ = editor.applyEditingKey(key)
            }
            filterLine = editor
            if filter != editor.text {
                filter = editor.text
                selection = 0
            }
            return .handled([])
        }
        if preview {
            if [.escape, .enter, .character("q"), .backspace].contains(key) {
                preview = false
                return .handled([.closePreview])
            }
            return .handled([])
        }
        switch key {
        case .escape where !filter.isEmpty:
            filter = ""
            selection = 0
        case .escape, .character("q"), .backspace: return .close
        case .down, .character("j"): selection += 1
        case .up, .character("k"): selection = max(0, selection - 1)
        case .pageDown: selection += InputController.eventPage
        case .pageUp: selection = max(0, selection - InputController.eventPage)
        case .home: selection = 0
        case .end: selection = Int.max / 2
        case .enter:
            preview = true
            return .handled([.previewSelectedKey])
        case .character("s"):
            sort = sort.next
            // Figures read best largest first, keys in alphabetical order.
            descending = sort != .key
            selection = 0
        case .character("S"): descending.toggle()
        case .character("/"): filterLine = LineEditor(filter)
        default: return .unhandled
        }
        return .handled([])
    }
}
