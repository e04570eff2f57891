/// Why the explorer could not take over the terminal.
public enum TerminalError: Error, Equatable, CustomStringConvertible {
    case notATerminal
    case termNotSet
    case unknownTerminal(String)
    case noCursorAddressing(String)

    public var description: String {
        switch self {
        case .notATerminal:
            "stdin/stdout is not a terminal; run strata inside a terminal (or tmux), or use `strata run` for non-interactive use (--script FILE, --replay TRACE, --compare B.yaml)"
        case .termNotSet:
            "TERM is not set; try TERM=xterm-256color"
        case .unknownTerminal(let term):
            "cannot initialise terminal type '\(term)' (no terminfo entry?); try TERM=xterm-256color"
        case .noCursorAddressing(let term):
            "terminal type '\(term)' cannot position the cursor; use a full terminal, or `strata run` for plain text"
        }
    }
}
