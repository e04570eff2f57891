import CNcursesw
import Foundation

/// Paints ``CellBuffer``s with ncursesw and reads keys. Every call happens on
/// the main actor (the main queue): ncurses is not thread-safe.
@MainActor
public final class NcursesBackend {
    private let screen: OpaquePointer
    private let window: UnsafeMutablePointer<WINDOW>
    public let unicode: Bool
    public let colorCount: Int
    private var attributes: [Role: (attr_t, Int16)] = [:]
    private var parser = EscapeSequenceParser()
    private var pending: [KeyPress] = []

    /// Takes over the terminal on stdin/stdout. `noColor` forces attributes only.
    public init(noColor: Bool, forceASCII: Bool, mouse: Bool = true) throws {
        guard isatty(0) == 1, isatty(1) == 1 else { throw TerminalError.notATerminal }
        guard let term = ProcessInfo.processInfo.environment["TERM"], !term.isEmpty else { throw TerminalError.termNotSet }
        // The user's locale decides: not UTF-8 (LC_ALL=C, say) means ASCII,
        // as the README promises; nothing switches it to C.UTF-8 behind their back.
        let codeset = String(cString: strata_init_locale())
        // True colour: ncurses sends 24-bit colours only for a terminal
        // description with direct colour (`xterm-direct`, `tmux-direct`), so
        // when COLORTERM says the terminal has them, use that description.
        let environment = ProcessInfo.processInfo.environment
        var screen: OpaquePointer?
        if !noColor, let direct = Self.directColorTerminal(term: term, environment: environment) {
            screen = strata_newterm(direct)
            // An ncurses that cannot count 2^24 colours (the old ABI caps
            // it) would read palette indexes as RGB: use $TERM instead.
            if let opened = screen, strata_terminfo_colors() < 1 << 24 {
                delscreen(opened)
                screen = nil
            }
        }
        guard let screen = screen ?? strata_newterm(term) else { throw TerminalError.unknownTerminal(term) }
        self.screen = screen
        window = strata_stdscr()
        guard strata_has_cursor_addressing() != 0 else {
            endwin()
            delscreen(screen)
            throw TerminalError.noCursorAddressing(term)
        }
        unicode = codeset == "UTF-8" && !forceASCII
        raw()
        noecho()
        nonl()
        keypad(window, true)
        nodelay(window, true)
        if mouse {
            // Every button event is asked for, though only button 1's press
            // and the wheel (buttons 4 and 5) are used (``mouse(_:x:y:)``):
            // a report outside the mask (the release every click ends with)
            // makes ncurses read on for another key, blocking in read(2)
            // even in nodelay mode, so no frame, tick or resize was served
            // until the next key.
            _ = mousemask(mmask_t(Self.allButtonEvents), nil)
            _ = mouseinterval(0)
        }
        curs_set(0)
        set_escdelay(25)
        if !noColor && has_colors() {
            start_color()
            use_default_colors()
            colorCount = Int(strata_colors())
        } else {
            colorCount = 0
        }
    }

    /// Whether colours are drawn exactly (24-bit), not mapped to a palette.
    public var isTrueColor: Bool { colorCount >= 1 << 24 }

    /// The direct-colour description to use for `term` when the environment
    /// says the terminal has true colour (`COLORTERM=truecolor` or `24bit`):
    /// `tmux-direct` inside tmux, else `<TERM>-direct`, else `xterm-direct`
    /// for xterm's family (`xterm-256color`), if installed.
    nonisolated static func directColorTerminal(term: String, environment: [String: String]) -> String? {
        guard let colorTerm = environment["COLORTERM"]?.lowercased(), colorTerm == "truecolor" || colorTerm == "24bit"
        else { return nil }
        if term.hasSuffix("-direct") { return nil }  // already direct
        let family = String(term.prefix { $0 != "-" })
        var candidates: [String] = []
        // Inside tmux (not GNU screen, which does not take 24-bit colour).
        if environment["TMUX"] != nil || family == "tmux" { candidates.append("tmux-direct") }
        // The terminal's own direct description (`kitty-direct`), then, for
        // xterm's family only, `xterm-direct`: another terminal's key and
        // capability strings could differ from xterm's.
        candidates.append("\(term)-direct")
        if family == "xterm" { candidates.append("xterm-direct") }
        return candidates.first { terminfoExists($0, environment: environment) }
    }

    /// Whether a terminfo entry named `name` is installed (the places ncurses searches).
    nonisolated static func terminfoExists(_ name: String, environment: [String: String]) -> Bool {
        guard let first = name.first, !name.contains("/") else { return false }
        var directories: [String] = []
        if let terminfo = environment["TERMINFO"] { directories.append(terminfo) }
        if let home = environment["HOME"] { directories.append(home + "/.terminfo") }
        if let dirs = environment["TERMINFO_DIRS"] { directories += dirs.split(separator: ":").map(String.init) }
        directories += ["/etc/terminfo", "/lib/terminfo", "/usr/share/terminfo", "/usr/lib/terminfo"]
        let hex = String(first.asciiValue ?? 0, radix: 16)
        return directories.contains { directory in
            FileManager.default.fileExists(atPath: "\(directory)/\(first)/\(name)")
                || FileManager.default.fileExists(atPath: "\(directory)/\(hex)/\(name)")
        }
    }

    /// Maps a theme onto colour pairs for this terminal's colour depth:
    /// direct colour → the theme's exact RGB; 256 colours → xterm-256;
    /// 8/16 → the basic 8; none → attributes only.
    public func apply(_ theme: Theme) {
        for role in Role.allCases {
            let style = theme.style(for: role)
            var attrs = style.attributes
            var pair: Int16 = 0
            if isTrueColor {
                pair = Int16(role.rawValue + 1)
                _ = init_extended_pair(Int32(pair), style.foreground.direct ?? -1, style.background.direct ?? -1)
            } else if colorCount >= 8 {
                let fg = (colorCount >= 256 ? style.foreground.xterm256 : style.foreground.basic8) ?? -1
                let bg = (colorCount >= 256 ? style.background.xterm256 : style.background.basic8) ?? -1
                pair = Int16(role.rawValue + 1)
                init_pair(pair, fg, bg)
            } else {
                attrs = Theme.monochromeAttributes(for: role).union(style.attributes)
            }
            attributes[role] = (Self.cursesAttributes(attrs), pair)
        }
    }

    static func cursesAttributes(_ attrs: ThemeAttributes) -> attr_t {
        var result = STRATA_A_NORMAL
        if attrs.contains(.bold) { result |= STRATA_A_BOLD }
        if attrs.contains(.dim) { result |= STRATA_A_DIM }
        if attrs.contains(.reverse) { result |= STRATA_A_REVERSE }
        if attrs.contains(.underline) { result |= STRATA_A_UNDERLINE }
        return result
    }

    public var size: (width: Int, height: Int) { (Int(getmaxx(window)), Int(getmaxy(window))) }

    /// Draws `buffer` (runs of equal role at once) and updates the terminal;
    /// ncurses sends only what changed.
    public func paint(_ buffer: CellBuffer, forceFullRedraw: Bool = false) {
        if forceFullRedraw { clearok(window, true) }
        werase(window)
        var text: [wchar_t] = []
        text.reserveCapacity(buffer.width * 2)
        for y in 0..<buffer.height {
            var x = 0
            while x < buffer.width {
                let role = buffer[x, y].role
                let start = x
                text.removeAll(keepingCapacity: true)
                while x < buffer.width, buffer[x, y].role == role {
                    // Never the bottom-right cell: writing it scrolls some terminals.
                    if y == buffer.height - 1 && x == buffer.width - 1 { break }
                    let cell = buffer[x, y]
                    if !cell.isContinuation {
                        for scalar in cell.character.unicodeScalars { text.append(wchar_t(bitPattern: scalar.value)) }
                    }
                    x += 1
                }
                if !text.isEmpty {
                    let (attr, pair) = attributes[role] ?? (STRATA_A_NORMAL, 0)
                    _ = strata_put(window, Int32(y), Int32(start), text, Int32(text.count), attr, pair)
                }
                if y == buffer.height - 1 && x == buffer.width - 1 { break }
            }
        }
        wnoutrefresh(window)
        doupdate()
    }

    /// The next key, if one is waiting. Escape sequences ncurses did not
    /// recognise are parsed whole (``EscapeSequenceParser``), never read as
    /// Esc plus characters.
    public func readKey() -> KeyPress? {
        keepProgramModeAfterResume()
        while pending.isEmpty {
            var code: wint_t = 0
            let result = wget_wch(window, &code)
            if result == ERR {
                pending.append(contentsOf: parser.endOfInput())
                if pending.isEmpty { return nil }
            } else if result == KEY_CODE_YES && Int32(code) == KEY_MOUSE {
                var event = MEVENT()
                if getmouse(&event) == OK, let mouse = Self.mouse(UInt(event.bstate), x: Int(event.x), y: Int(event.y)) {
                    pending.append(.mouse(mouse))
                }
            } else if result == KEY_CODE_YES {
                if let key = Self.functionKey(Int32(code)) { pending.append(key) }
            } else {
                pending.append(contentsOf: parser.feed(UInt32(code)))
            }
        }
        return pending.removeFirst()
    }

    // The masks are macros Swift cannot import; these are their values in
    // ncurses 6 (NCURSES_MOUSE_VERSION 2): button N's events are
    // released 1, pressed 2, clicked 4, double- 8 and triple-clicked 16,
    // shifted left by (N - 1) * 5.
    /// A button went down: pressed, or a press ncurses merged with its
    /// release into a click (when both arrive in one read, as under load).
    static let wentDown: UInt = 2 | 4 | 8 | 16
    /// `ALL_MOUSE_EVENTS`: press, release and clicks of buttons 1-5 and the
    /// modifiers, everything below `REPORT_MOUSE_POSITION` (1 << 28: motion, not asked for).
    static let allButtonEvents: UInt = (1 << 28) - 1

    /// A mouse report as the explorer's event (other buttons, and releases, are ignored).
    static func mouse(_ state: UInt, x: Int, y: Int) -> MouseEvent? {
        if state & (wentDown << 15) != 0 { return MouseEvent(.wheelUp, x: x, y: y) }
        if state & (wentDown << 20) != 0 { return MouseEvent(.wheelDown, x: x, y: y) }
        if state & wentDown != 0 { return MouseEvent(.press, x: x, y: y) }
        return nil
    }

    /// Keys ncurses recognised from terminfo; others are ignored.
    static func functionKey(_ code: Int32) -> KeyPress? {
        switch code {
        case KEY_RESIZE: .resize
        case KEY_UP: .up
        case KEY_DOWN: .down
        case KEY_LEFT: .left
        case KEY_RIGHT: .right
        case KEY_HOME: .home
        case KEY_END: .end
        case KEY_PPAGE: .pageUp
        case KEY_NPAGE: .pageDown
        case KEY_IC: .insert
        case KEY_DC: .delete
        case KEY_BACKSPACE: .backspace
        case KEY_ENTER: .enter
        case KEY_BTAB: .backTab
        case KEY_F0 + 1: .help
        default: nil
        }
    }

    /// Ctrl-Z: gives the terminal back to the shell and stops the process
    /// (the shell's job control takes over); returns once it is continued
    /// (`fg`), with the screen in curses mode again, to be painted whole.
    public func suspend() {
        endwin()
        // SIGTSTP, not SIGSTOP: with no job control to continue it (ssh -t,
        // a launcher), the kernel discards it and the explorer just redraws.
        // Its default action, raised on this thread: a handler (ncurses
        // installs one) would run on whichever thread took the signal while
        // this one went on and took the terminal back.
        // (Unblocked here for the moment: the main thread may block it.)
        let previous = signal(SIGTSTP, SIG_DFL)
        var tstp = sigset_t(), mask = sigset_t()
        sigemptyset(&tstp)
        sigaddset(&tstp, SIGTSTP)
        pthread_sigmask(SIG_UNBLOCK, &tstp, &mask)
        raise(SIGTSTP)
        pthread_sigmask(SIG_SETMASK, &mask, nil)
        signal(SIGTSTP, previous)
        // Continued. The shell restores the terminal modes it saved when the
        // job stopped (cooked: endwin ran first), possibly after this line:
        // for a while, each key read checks the modes and takes them back.
        resumedAt = .now
        restoreProgramMode()
        refresh()
    }

    /// When the last ``suspend()`` returned (the modes are watched for 3 s).
    private var resumedAt: ContinuousClock.Instant?

    private func restoreProgramMode() {
        reset_prog_mode()
        raw()
        noecho()
        nonl()
        keypad(window, true)
        nodelay(window, true)
    }

    /// After a resume: the shell put the terminal back in line mode after
    /// this process had set its own; set them again.
    private func keepProgramModeAfterResume() {
        guard let resumedAt else { return }
        guard ContinuousClock.now - resumedAt < .seconds(3) else { self.resumedAt = nil; return }
        var modes = termios()
        guard tcgetattr(STDIN_FILENO, &modes) == 0, modes.c_lflag & tcflag_t(ICANON | ECHO) != 0 else { return }
        restoreProgramMode()
    }

    /// Gives the terminal back.
    public func shutdown() {
        endwin()
        delscreen(screen)
    }
}
