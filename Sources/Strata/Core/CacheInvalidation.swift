import Logging
/// A change made to a level's store by someone else (another process, another
/// client of a shared store), reported so that the levels above can drop what
/// they hold. See ``CacheLevel/subscribe(_:)``.
public enum CacheInvalidation<Key: Sendable>: Sendable {
    /// This key changed (set, removed, expired or evicted).
    case key(Key)
    /// Anything may have changed: the store was flushed or cleared.
    case all
    /// The level lost contact with its store and may miss changes until it
    /// is back (then it reports ``all``). Levels above drop what they hold,
    /// as for ``all``; a fail-safe (``ResilientCache``) keeps its last known
    /// values: nobody is known to have changed them.
    case contactLost
}

extension CacheInvalidation: Equatable where Key: Equatable {}

extension CacheInvalidation {
    /// The key that changed; `nil` when anything may have.
    var changedKey: Key? { if case .key(let key) = self { key } else { nil } }

    /// This change for a level whose keys cannot be named from these ones:
    /// ``all``, or ``contactLost`` as such.
    func withoutKey<Other>() -> CacheInvalidation<Other> { if case .contactLost = self { .contactLost } else { .all } }
}

/// The listeners subscribed to a level that reports changes; a level with
/// a shared store keeps one, hands out its ``add(_:)``'s subscriptions from
/// ``CacheLevel/subscribe(_:)`` and calls ``publish(_:)``.
public final class InvalidationListeners<Key: Sendable>: Sendable {
    /// Called with each change the level publishes.
    public typealias Listener = @Sendable (CacheChange<Key>) async -> Void

    private struct State {
        var entries: [(id: UInt64, listener: Listener)] = []
        var nextID: UInt64 = 0
        /// Subscriptions cancelled so far (see ``churnWarningAt``).
        var cancelled = 0
    }

    private let state = Mutex(State())
    private let levelName: String

    /// Subscriptions made and cancelled this many times log one warning:
    /// stacks built per request (each a fresh composition) leave the levels
    /// above without a subscription between requests.
    static var churnWarningAt: Int { 64 }

    /// `levelName` names the level in the warning about stacks built per request.
    public init(levelName: String = "a level that reports changes") {
        self.levelName = levelName
    }

    /// Adds `listener` until the subscription returned is cancelled or released.
    public func add(_ listener: @escaping Listener) -> CacheSubscription {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.entries.append((state.nextID, listener))
            return state.nextID
        }
        return CacheSubscription { [weak self] in self?.remove(id) }
    }

    private func remove(_ id: UInt64) {
        // Released after the lock: a listener may hold the last reference to
        // something whose deinit cancels another subscription here.
        let (removed, warn) = state.withLock { state -> ([(id: UInt64, listener: Listener)], Bool) in
            guard let i = state.entries.firstIndex(where: { $0.id == id }) else { return ([], false) }
            state.cancelled += 1
            return ([state.entries.remove(at: i)], state.cancelled == Self.churnWarningAt)
        }
        _ = removed
        if warn {
            Logger(label: "strata.subscriptions").warning(
                "subscriptions to \(levelName) were made and released \(Self.churnWarningAt) times: build a stack once and ask it per request; a level above a stack that is gone hears no more changes")
        }
    }

    /// Whether anyone listens (a level may skip subscribing to its store if not).
    public var isEmpty: Bool { state.withLock { $0.entries.isEmpty } }

    /// Whether the warning about subscriptions that come and go was logged.
    var warnedOfChurn: Bool { state.withLock { $0.cancelled >= Self.churnWarningAt } }

    /// How many listeners are subscribed.
    public var count: Int { state.withLock { $0.entries.count } }

    /// Tells every listener, in registration order, of a change made by
    /// someone else, and returns when all have applied it.
    public func publish(_ invalidation: CacheInvalidation<Key>) async {
        await publish(CacheChange(invalidation))
    }

    /// Tells every listener, in registration order, and returns when all have applied it.
    package func publish(_ change: CacheChange<Key>) async {
        for entry in state.withLock({ $0.entries }) { await entry.listener(change) }
    }

    /// Reports a write the level made itself, which its store does not report
    /// back to this process, to every listener as a ``CacheChange`` carrying
    /// the write's ``CacheWriteOrigin``: the compositions the write passed
    /// through skip it, other compositions over the level drop the key.
    /// Delivered at once, in a task of its own that inherits nothing from
    /// the writer's (a listener applying it may have to wait for a write of
    /// its composition in progress, which may be this one's caller; and
    /// what the listeners write meanwhile is no part of the writer's write
    /// nor of its request's trace).
    ///
    /// `origin`: the write's (by default the current task's); an empty one
    /// for a write that failed in a way that may have changed the store, so
    /// that the compositions it passed through drop what they took too.
    package func reportLocalWrite(_ invalidation: CacheInvalidation<Key>,
                                 origin: CacheWriteOrigin = CacheContext.writeOrigin) {
        guard !isEmpty else { return }
        let change = CacheChange(invalidation, reportingWriteBy: origin)
        Task.detached { await self.publish(change) }
    }
}

import Synchronization
