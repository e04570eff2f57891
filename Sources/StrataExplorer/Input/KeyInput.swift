/// A key as the explorer understands it (the backend translates ncurses codes).
public enum KeyPress: Equatable, Sendable {
    case character(Character)
    case enter, escape, backspace, up, down, resize, interrupt, redraw, help
    case left, right, home, end, pageUp, pageDown, insert, delete
    case tab, backTab
    /// Ctrl plus a letter not taken above (`control("a")` is Ctrl-A).
    case control(Character)
    case mouse(MouseEvent)
}

/// What a key asks the app to do.
public enum InputAction: Equatable, Sendable {
    case run(Command)
    case flipToggle(index: Int)
    case cycleTheme
    case faster, slower
    case redraw
    case error(String)
    /// A message that is not an error (the candidates of a Tab completion).
    case hint(String)
    /// The key inspector opened on a level (index) or closed (`nil`).
    case inspect(level: Int?)
    /// Peek at the inspector's selected key (its preview opened).
    case previewSelectedKey
    case closePreview
}

/// Normal-mode keys and the `:` command line with history. Pure: the app
/// feeds keys in and carries out the actions that come back.
public struct InputController: Equatable, Sendable {
    /// The `:` line while it is open.
    public private(set) var line: LineEditor?
    /// The text after `:` while the command line is open.
    public var commandLine: String? { line?.text }
    /// Characters after the cursor on the command line (0: at the end).
    public var commandCursor: Int { line?.charactersAfterCursor ?? 0 }
    /// What Tab completes against (the app fills in levels, toggles, themes).
    public var completion = Completion()
    /// The focused pane; nil until one is chosen (Tab, j/k, PgUp/PgDn, /).
    public private(set) var focus: Focus?
    /// The focused pane fills the screen.
    public private(set) var zoomed = false
    /// One line per level instead of a pane each.
    public private(set) var compact = false
    /// The selected event, 0 the newest (of those the filter lets through).
    public private(set) var eventSelection = 0
    /// The event log's filter: only lines containing it (case-insensitive).
    public private(set) var eventFilter: String?
    /// The `/` line (the filter being typed) while it is open.
    public private(set) var filterLine: LineEditor?
    /// The selected event's detail is open.
    public private(set) var showDetail = false
    /// A command waiting for `y` (clearing every level).
    public private(set) var pendingConfirmation: Command?
    /// The key inspector, while it is open (Enter on a level).
    public private(set) var inspector: InspectorInput?

    /// Events a page key moves the selection by.
    public static let eventPage = 10
    public private(set) var showHelp = false
    /// The first help line shown (the app clamps it to what the screen holds).
    public private(set) var helpScroll = 0
    public private(set) var history: [String] = []
    private var historyIndex: Int?
    private var draft = ""

    public static let historyLimit = 100

    public init(history: [String] = []) {
        self.history = Array(history.suffix(Self.historyLimit))
    }

    public mutating func handle(_ key: KeyPress) -> [InputAction] {
        if key == .interrupt { return [.run(.quit)] }
        if key == .redraw || key == .resize { return [.redraw] }
        if line != nil { return editCommandLine(key) }
        if filterLine != nil { return editFilterLine(key) }
        if let command = pendingConfirmation {
            pendingConfirmation = nil
            return key == .character("y") || key == .character("Y") ? [.run(command)] : [.hint("cancelled")]
        }
        if showDetail {
            if [.escape, .enter, .character("q"), .backspace].contains(key) { showDetail = false }
            return []
        }
        if showHelp {
            switch key {
            case .escape, .character("?"), .character("q"), .help, .character("h"): showHelp = false
            case .down, .character("j"): helpScroll += 1
            case .up, .character("k"): helpScroll = max(0, helpScroll - 1)
            case .pageDown, .character(" "): helpScroll += 10
            case .pageUp: helpScroll = max(0, helpScroll - 10)
            case .home: helpScroll = 0
            case .end: helpScroll = Int.max / 2
            default: break
            }
            return []
        }
        if inspector != nil { return handleInInspector(key) }
        guard let binding = KeyBinding.binding(for: key) else { return [] }
        return perform(binding.action, key: key)
    }

    /// A key while the inspector is open: its own keys first, then the
    /// bindings that make sense over it (`:`, help, pause, refresh, theme).
    private mutating func handleInInspector(_ key: KeyPress) -> [InputAction] {
        guard var state = inspector else { return [] }
        let outcome = state.handle(key)
        inspector = state
        switch outcome {
        case .handled(let actions): return actions
        case .close:
            inspector = nil
            return [.inspect(level: nil)]
        case .unhandled:
            guard let binding = KeyBinding.binding(for: key), binding.action.worksOverInspector else { return [] }
            return perform(binding.action, key: key)
        }
    }

    /// Closes the inspector's preview (there was no key to show).
    public mutating func closeInspectorPreview() { inspector?.preview = false }

    /// Keeps the inspector's selection within the `count` keys shown.
    public mutating func clampInspectorSelection(to count: Int) {
        guard let selection = inspector?.selection else { return }
        inspector?.selection = min(max(0, selection), max(0, count - 1))
    }

    /// Carries out a normal-mode binding (``KeyBinding/table``).
    private mutating func perform(_ action: KeyBinding.Action, key: KeyPress) -> [InputAction] {
        let levels = completion.levels.count
        switch action {
        case .open(let text): open(text)
        case .run(let command): return [.run(command)]
        case .flipToggle:
            if case .character(let c) = key, let digit = c.wholeNumberValue, (1...9).contains(digit) {
                return [.flipToggle(index: digit - 1)]
            }
        case .cycleTheme: return [.cycleTheme]
        case .faster: return [.faster]
        case .slower: return [.slower]
        case .redraw: return [.redraw]
        case .help:
            showHelp = true
            helpScroll = 0
        case .clearFocused:
            // The focused level by default; the line is the confirmation.
            if case .level(let index) = focus, index < levels {
                open("clear " + completion.levels[index])
            } else {
                open("clear ")
            }
        case .focusNext: focus = (focus ?? .events).moved(forward: true, levels: levels)
        case .focusPrevious: focus = (focus ?? .level(0)).moved(forward: false, levels: levels)
        case .down:
            if focus == .events {
                eventSelection += 1
            } else if case .level(let index) = focus, index + 1 < levels {
                focus = .level(index + 1)
            } else {
                focus = focus == nil && levels > 0 ? .level(0) : .events
            }
        case .up:
            if focus == .events, eventSelection > 0 {
                eventSelection -= 1
            } else if case .level(let index) = focus {
                focus = .level(max(0, index - 1))
            } else if levels > 0 {
                focus = .level(levels - 1)
            }
        case .pageDown:
            focus = .events
            eventSelection += Self.eventPage
        case .pageUp:
            focus = .events
            eventSelection = max(0, eventSelection - Self.eventPage)
        case .newest: if focus == .events { eventSelection = 0 }
        case .detail:
            if focus == .events {
                showDetail = true
            } else if case .level(let index) = focus, index < levels {
                inspector = InspectorInput(level: index)
                return [.inspect(level: index)]
            }
        case .zoom: if focus != nil { zoomed.toggle() }
        case .compact: compact.toggle()
        case .filter:
            filterLine = LineEditor(eventFilter ?? "")
            focus = .events
        case .back:
            if zoomed {
                zoomed = false
            } else if eventFilter != nil {
                eventFilter = nil
                eventSelection = 0
            }
        case .lineEditing, .inspector: break
        }
        return []
    }

    /// A mouse press on `target` (the app finds the pane under the pointer):
    /// focuses it. Ignored while a line, the help or a detail is open.
    public mutating func click(_ target: Focus) {
        guard line == nil, filterLine == nil, !showHelp, !showDetail, inspector == nil else { return }
        focus = target
    }

    /// The mouse wheel: the event log takes the focus and scrolls (`by`
    /// events, positive towards older ones).
    public mutating func scrollEvents(by count: Int) {
        guard line == nil, filterLine == nil, !showHelp, !showDetail, inspector == nil else { return }
        focus = .events
        eventSelection = max(0, eventSelection + count)
    }

    /// Keeps the event selection within the `count` events shown; the detail
    /// closes when there is no event to show.
    public mutating func clampEventSelection(to count: Int) {
        eventSelection = min(max(0, eventSelection), max(0, count - 1))
        if count == 0 { showDetail = false }
    }

    private mutating func editFilterLine(_ key: KeyPress) -> [InputAction] {
        guard var editor = filterLine else { return [] }
        filterLine = nil
        switch key {
        case .escape: return []
        case .enter:
            let text = editor.text.trimming(.blanks)
            eventFilter = text.isEmpty ? nil : text
            eventSelection = 0
            return []
        case .backspace:
            if editor.text.isEmpty { return [] }
            editor.backspace()
        case .character(let c):
            if editor.text.utf8.count < 1024 { editor.insert(c) }
        default: _ = editor.applyEditingKey(key)
        }
        filterLine = editor
        return []
    }

    /// Keeps the help scroll within `maximum` (what the screen can scroll to).
    public mutating func clampHelpScroll(to maximum: Int) {
        helpScroll = min(max(0, helpScroll), max(0, maximum))
    }

    private mutating func open(_ text: String) {
        line = LineEditor(text)
        historyIndex = nil
        draft = text
    }

    private mutating func editCommandLine(_ key: KeyPress) -> [InputAction] {
        guard var editor = line else { return [] }
        // Own the only reference while editing: appending to a string that
        // `line` still shares would copy it, every key (quadratic paste).
        line = nil
        switch key {
        case .escape:
            return []
        case .enter:
            let text = editor.text.trimming(.blanks)
            guard !text.isEmpty else { return [] }
            if history.last != text { history.append(text) }
            if history.count > Self.historyLimit { history.removeFirst() }
            do {
                let command = try CommandParser.parse(text)
                // Emptying every level is asked about first (y runs it).
                if command == .clear(level: nil) && completion.levels.count > 1 {
                    pendingConfirmation = command
                    return [.hint("clear every level (\(completion.levels.joined(separator: ", ")))? y clears, any other key cancels")]
                }
                return [.run(command)]
            } catch { return [.error(error.message)] }
        case .backspace:
            if editor.text.isEmpty { return [] }  // Backspace on an empty line closes it
            editor.backspace()
        case .tab:
            let names = completion.complete(&editor)
            line = editor
            return names.count > 1 ? [.hint(names.joined(separator: "  "))] : []
        case .up:
            guard !history.isEmpty else { break }
            if historyIndex == nil { draft = editor.text }
            let index = max(0, (historyIndex ?? history.count) - 1)
            historyIndex = index
            editor.replace(with: history[index])
        case .down:
            guard let index = historyIndex else { break }
            if index + 1 < history.count {
                historyIndex = index + 1
                editor.replace(with: history[index + 1])
            } else {
                historyIndex = nil
                editor.replace(with: draft)
            }
        case .character(let c):
            guard editor.text.utf8.count < CommandParser.maxLength else {
                line = editor
                return [.error("command line is full (\(CommandParser.maxLength) bytes)")]
            }
            editor.insert(c)
        default: _ = editor.applyEditingKey(key)
        }
        line = editor
        return []
    }
}

extension String {
    func trimming(_ set: Set<Character>) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}

extension Set where Element == Character {
    /// Space and tab (the command line's separators).
    static let blanks: Set<Character> = [" ", "\t"]
}
