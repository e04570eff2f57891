/// Reads the characters ncurses hands over one by one into ``Key``s, parsing
/// the escape sequences terminfo did not describe (tmux sends Home as
/// `ESC [ 1 ~` even when TERM says `ESC O H`). A CSI (`ESC [` parameters
/// final) or SS3 (`ESC O` final) sequence is read whole: a known one becomes
/// its key, an unknown one is dropped whole, so its bytes never act as keys.
public struct EscapeSequenceParser: Equatable, Sendable {
    enum State: Equatable, Sendable {
        case ground
        case escape
        case csi(String)
        /// After `ESC O`; `parameters` once a parameter byte has come (such a
        /// sequence, a modified key, is unknown and dropped at its final byte).
        case ss3(parameters: Bool)
    }

    private var state = State.ground
    /// Longest parameter string kept (a longer sequence is still read to its end).
    static let parameterLimit = 32

    public init() {}

    /// Whether no sequence is half read.
    public var isIdle: Bool { state == .ground }

    /// Feeds one character code; returns the keys it completes (none while a
    /// sequence is being read or when one is dropped).
    public mutating func feed(_ code: UInt32) -> [KeyPress] {
        switch state {
        case .ground:
            if code == 27 {
                state = .escape
                return []
            }
            return Self.plain(code)
        case .escape:
            switch code {
            case 0x5B: state = .csi(""); return []           // ESC [
            case 0x4F: state = .ss3(parameters: false); return []  // ESC O
            case 27: return [.escape]                        // Esc, then another sequence
            default:
                // Esc, then a key typed (or sent) before the Esc delay ran
                // out: both keys, never one lost (Alt+key means nothing here).
                state = .ground
                return [.escape] + Self.plain(code)
            }
        case .csi(let parameters):
            switch code {
            case 0x40...0x7E:
                state = .ground
                return Self.csi(parameters, final: code).map { [$0] } ?? []
            case 0x20...0x3F:
                if parameters.utf8.count < Self.parameterLimit, let scalar = Unicode.Scalar(code) {
                    state = .csi(parameters + String(Character(scalar)))
                }
                return []
            case 27:
                state = .escape                              // a broken sequence, then a new one
                return []
            default:
                state = .ground                              // not a CSI after all: dropped
                return []
            }
        case .ss3(let parameters):
            switch code {
            case 27:
                state = .escape                              // a broken sequence, then a new one
                return []
            case 0x20...0x3F:
                state = .ss3(parameters: true)               // read to the final byte
                return []
            default:
                state = .ground
                return parameters ? [] : Self.ss3(code).map { [$0] } ?? []
            }
        }
    }

    /// No more input is waiting (ncurses has already waited its Esc delay):
    /// a lone Esc is the Escape key. A half-read sequence waits for its end.
    public mutating func endOfInput() -> [KeyPress] {
        guard state == .escape else { return [] }
        state = .ground
        return [.escape]
    }

    /// A character outside any sequence.
    static func plain(_ code: UInt32) -> [KeyPress] {
        switch code {
        case 3: return [.interrupt]          // Ctrl-C (raw mode)
        case 12: return [.redraw]            // Ctrl-L
        case 10, 13: return [.enter]
        case 8, 127: return [.backspace]
        case 9: return [.tab]
        case 1...26: return [.control(Character(Unicode.Scalar(UInt8(96 + code))))]
        case 0..<32: return []
        default:
            guard let scalar = Unicode.Scalar(code) else { return [] }
            return [.character(Character(scalar))]
        }
    }

    /// `ESC [ parameters final`: cursor keys (any modifiers), `~` keys, or nil.
    static func csi(_ parameters: String, final: UInt32) -> KeyPress? {
        let fields = parameters.split(separator: ";", omittingEmptySubsequences: false)
        switch final {
        case 0x41: return .up
        case 0x42: return .down
        case 0x43: return .right
        case 0x44: return .left
        case 0x48: return .home
        case 0x46: return .end
        case 0x5A: return .backTab                 // Shift-Tab
        case 0x7E:
            switch Int(fields.first ?? "") {
            case 1, 7: return .home
            case 4, 8: return .end
            case 2: return .insert
            case 3: return .delete
            case 5: return .pageUp
            case 6: return .pageDown
            case 11: return .help                  // F1
            default: return nil                    // other F keys, bracketed-paste marks, …
            }
        default: return nil
        }
    }

    /// `ESC O final`: application-mode cursor keys, keypad Enter, F1.
    static func ss3(_ code: UInt32) -> KeyPress? {
        switch code {
        case 0x41: return .up
        case 0x42: return .down
        case 0x43: return .right
        case 0x44: return .left
        case 0x48: return .home
        case 0x46: return .end
        case 0x4D: return .enter
        case 0x50: return .help
        default: return nil
        }
    }
}
