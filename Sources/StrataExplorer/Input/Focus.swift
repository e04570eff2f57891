/// The pane keys act on: a level (by its index, top first), compare mode's
/// side-B level, or the event log.
public enum Focus: Equatable, Sendable {
    /// A level of the pipeline (compare mode: of side A).
    case level(Int)
    /// Compare mode: a level of side B (by its index, top first).
    case levelB(Int)
    case events

    /// The next pane in Tab order (`forward`) or the previous, wrapping:
    /// the `levels` level panes (compare mode: side A's), then side B's
    /// `levelsB`, then the log.
    func moved(forward: Bool, levels: Int, levelsB: Int = 0) -> Focus {
        let count = levels + levelsB + 1
        let index = switch self {
        case .level(let i): min(max(0, i), levels)
        case .levelB(let i): levels + min(max(0, i), levelsB)
        case .events: levels + levelsB
        }
        let next = (index + (forward ? 1 : count - 1)) % count
        if next < levels { return .level(next) }
        return next < levels + levelsB ? .levelB(next - levels) : .events
    }

    /// The focused level's side (A outside compare mode) and index; nil on the log.
    var sideLevel: (side: ComparisonModel.Side, index: Int)? {
        switch self {
        case .level(let index): (.a, index)
        case .levelB(let index): (.b, index)
        case .events: nil
        }
    }
}
