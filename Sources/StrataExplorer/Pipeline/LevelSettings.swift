import Synchronization

/// A live level's settings as they are now: its ``LevelSpec`` from the
/// file, with the edits made since (`set-capacity`, `set-ttl`, `set-policy`).
final class LevelSettings: Sendable {
    private let current: Mutex<LevelSpec>

    init(_ spec: LevelSpec) { current = Mutex(spec) }

    var spec: LevelSpec { current.withLock { $0 } }

    func update(_ change: (inout LevelSpec) -> Void) { current.withLock { change(&$0) } }
}
