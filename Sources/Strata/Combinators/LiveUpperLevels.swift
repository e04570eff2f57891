import Logging
import Synchronization

/// The upper levels of the stacks alive in the process, by identity: two
/// stacks over one upper level do not order their writes and back-fills
/// against each other (each has its own ``WriteOrder``), so a back-fill of
/// one can undo a write of the other. The second is warned about, once per
/// level while it has stacks: build one stack and share it.
///
/// A level is told apart by ``CacheLevel/stackIdentity``: its object,
/// looking through wrappers (`memory.instrumented()` built per request is
/// still `memory`); a level that is a value (a nested composition) has none,
/// and its own stacks are checked at their upper levels.
enum LiveUpperLevels {
    private struct State {
        var stacks: [ObjectIdentifier: Int] = [:]
        var warned: Set<ObjectIdentifier> = []
    }

    private static let state = Mutex(State())
    private static let logger = Logger(label: "strata.stack")

    /// A stack over `level` was built; `nil` when `level` has no identity.
    static func enter(_ level: some CacheLevel) -> ObjectIdentifier? {
        guard let id = level.stackIdentity else { return nil }
        let warn = state.withLock { state -> Bool in
            state.stacks[id, default: 0] += 1
            return state.stacks[id]! == 2 && state.warned.insert(id).inserted
        }
        if warn {
            logger.warning("two stacks are alive over one upper level: their writes are not ordered against each other; build one stack and share it",
                           metadata: ["level": "\(level.name)"])
        }
        return id
    }

    /// The stack built by ``enter(_:)`` is gone.
    static func leave(_ id: ObjectIdentifier) {
        state.withLock { state in
            guard state.stacks[id] == 1 else { state.stacks[id]? -= 1; return }
            // The level may go now, and another object take its identity.
            state.stacks[id] = nil
            state.warned.remove(id)
        }
    }

    /// Whether a second stack over `level` was warned about.
    static func warned(_ level: some CacheLevel) -> Bool {
        guard let id = level.stackIdentity else { return false }
        return state.withLock { $0.warned.contains(id) }
    }
}
