/// The pane keys act on: a level (by its index, top first) or the event log.
/// Later views (a key inspector, a comparison) add cases here.
public enum Focus: Equatable, Sendable {
    case level(Int)
    case events

    /// The next pane in screen order (`forward`) or the previous, wrapping,
    /// over `levels` level panes and the log.
    func moved(forward: Bool, levels: Int) -> Focus {
        let count = levels + 1
        let index = switch self {
        case .level(let i): min(max(0, i), levels)
        case .events: levels
        }
        let next = (index + (forward ? 1 : count - 1)) % count
        return next == levels ? .events : .level(next)
    }
}
