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

    /// Takes over the terminal on stdin/stdout. `noColor` forces attributes only.
    public init(noColor: Bool, forceASCII: Bool) throws {
        guard isatty(0) == 1, isatty(1) == 1 else { throw TerminalError.notATerminal }
        guard let term = ProcessInfo.processInfo.environment["TERM"], !term.isEmpty else { throw TerminalError.termNotSet }
        var codeset = String(cString: strata_init_locale())
        if codeset != "UTF-8", setlocale(LC_CTYPE, "C.UTF-8") != nil {
            codeset = String(cString: nl_langinfo(nl_item(CODESET)))
        }
        guard let screen = strata_newterm(term) else { throw TerminalError.unknownTerminal(term) }
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

    /// Maps a theme onto colour pairs for this terminal's colour depth:
    /// 256 colours → xterm-256; 8/16 → the basic 8; none → attributes only.
    public func apply(_ theme: Theme) {
        for role in Role.allCases {
            let style = theme.style(for: role)
            var attrs = style.attributes
            var pair: Int16 = 0
            if colorCount >= 8 {
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

    /// The next key, if one is waiting.
    public func readKey() -> Key? {
        var code: wint_t = 0
        let result = wget_wch(window, &code)
        if result == ERR { return nil }
        if result == KEY_CODE_YES {
            switch Int32(code) {
            case KEY_RESIZE: return .resize
            case KEY_UP: return .up
            case KEY_DOWN: return .down
            case KEY_BACKSPACE: return .backspace
            case KEY_ENTER: return .enter
            case KEY_F0 + 1: return .help
            default: return readKey()  // ignore other function keys
            }
        }
        switch code {
        case 3: return .interrupt          // Ctrl-C (raw mode)
        case 12: return .redraw            // Ctrl-L
        case 10, 13: return .enter
        case 27: return .escape
        case 8, 127: return .backspace
        default:
            guard let scalar = Unicode.Scalar(UInt32(code)), code >= 32 else { return readKey() }
            return .character(Character(scalar))
        }
    }

    /// Gives the terminal back.
    public func shutdown() {
        endwin()
        delscreen(screen)
    }
}
