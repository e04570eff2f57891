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
    /// Compare mode: each side's levels, which focus moves over (the app
    /// fills them in; `completion` then holds the sided names). nil: one
    /// pipeline, whose levels are `completion.levels`.
    public var sides: CompareSides?
    /// The focused pane; nil until one is chosen (Tab, j/k, PgUp/PgDn, /).
    public private(set) var focus: Focus? {
        didSet {
            if case .level = focus { lastSideB = false }
            if case .levelB = focus { lastSideB = true }
        }
    }
    /// Compare mode: side B's column had the focus last (`k` from the log goes back to it).
    private var lastSideB = false
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
        let before = focus
        return perform(binding.action, key: key) + focusHint(from: before)
    }

    /// Compare mode: the status line names the newly focused pane and its
    /// side (`focus: B:L1 …`), as two panes of the same name can be on screen.
    private func focusHint(from before: Focus?) -> [InputAction] {
        guard let sides, focus != before, let focus else { return [] }
        guard let (side, index) = focus.sideLevel else { return [.hint("focus: the event log")] }
        return sides.name(side, index).map { [.hint("focus: \($0) (Enter lists its keys, c clears it)")] } ?? []
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
        let levels = sides?.a.count ?? completion.levels.count, levelsB = sides?.b.count ?? 0
        // Compare mode with a table per side, one above the other: j/k walk A's levels, then B's.
        let stacked = sides.map { !$0.sideBySide } ?? false
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
            // The focused level (on its side in compare mode) by default; the line is the confirmation.
            if let name = focusedLevelName {
                open("clear " + name)
            } else {
                open("clear ")
            }
        case .focusNext: focus = (focus ?? .events).moved(forward: true, levels: levels, levelsB: levelsB)
        case .focusPrevious: focus = (focus ?? .level(0)).moved(forward: false, levels: levels, levelsB: levelsB)
        case .down:
            switch focus {
            case .events: eventSelection += 1
            case .level(let index) where index + 1 < levels: focus = .level(index + 1)
            case .level where stacked && levelsB > 0: focus = .levelB(0)
            case .levelB(let index) where index + 1 < levelsB: focus = .levelB(index + 1)
            case nil where levels > 0: focus = .level(0)
            default: focus = .events
            }
        case .up:
            switch focus {
            case .events where eventSelection > 0: eventSelection -= 1
            case .level(let index): focus = .level(max(0, index - 1))
            case .levelB(let index) where index == 0 && stacked && levels > 0: focus = .level(levels - 1)
            case .levelB(let index): focus = .levelB(max(0, index - 1))
            default:
                // From the log (or nothing): the lowest level drawn above it; side by
                // side, in the column focused last.
                if levelsB > 0 && (stacked || lastSideB) {
                    focus = .levelB(levelsB - 1)
                } else if levels > 0 {
                    focus = .level(levels - 1)
                }
            }
        case .sideA:
            // Compare mode: the level of the same row on the other side (its
            // last when it has fewer); from nothing focused, its first.
            switch focus {
            case .levelB(let index) where levels > 0: focus = .level(min(index, levels - 1))
            case nil where sides != nil && levels > 0: focus = .level(0)
            default: break
            }
        case .sideB:
            switch focus {
            case .level(let index) where levelsB > 0: focus = .levelB(min(index, levelsB - 1))
            case nil where levelsB > 0: focus = .levelB(0)
            default: break
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
            } else if let (side, index) = focus?.sideLevel, index < (side == .a ? levels : levelsB) {
                inspector = InspectorInput(level: index, side: side)
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
    /// focuses it (compare mode: the status line names it, as a key would).
    /// Ignored while a line, the help or a detail is open.
    @discardableResult
    public mutating func click(_ target: Focus) -> [InputAction] {
        guard line == nil, filterLine == nil, !showHelp, !showDetail, inspector == nil else { return [] }
        let before = focus
        focus = target
        return focusHint(from: before)
    }

    /// The focused level's name as `:clear` takes it (`B:L1` in compare mode); nil on the log.
    private var focusedLevelName: String? {
        guard let (side, index) = focus?.sideLevel else { return nil }
        if let sides { return sides.name(side, index) }
        return index < completion.levels.count ? completion.levels[index] : nil
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
                    // Compare mode: each side's levels once, not the sided names completion takes.
                    let names = sides.map { "A: \($0.a.joined(separator: ", ")); B: \($0.b.joined(separator: ", "))" }
                        ?? completion.levels.joined(separator: ", ")
                    return [.hint("clear every level (\(names))? y clears, any other key cancels")]
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
