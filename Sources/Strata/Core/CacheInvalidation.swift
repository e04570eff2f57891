/// A change made to a level's store by someone else (another process, another
/// client of a shared store), reported so that the levels above can drop what
/// they hold. See ``CacheLevel/addInvalidationListener(_:)``.
public enum CacheInvalidation<Key: Sendable>: Sendable {
    /// This key changed (set, removed, expired or evicted).
    case key(Key)
    /// Anything may have changed: the store was flushed, or the level lost
    /// contact with it and may have missed changes.
    case all
}

extension CacheInvalidation: Equatable where Key: Equatable {}

/// Listeners registered with a level that reports invalidations; a level with
/// a shared store keeps one and calls ``publish(_:)``.
public final class InvalidationListeners<Key: Sendable>: Sendable {
    public typealias Listener = @Sendable (CacheInvalidation<Key>) async -> Void

    private struct Entry {
        let listener: Listener
        /// Set for a listener a composition registered (see ``ListenerRegistration``).
        let registration: ListenerRegistration?
    }

    private let listeners = Mutex<[Entry]>([])

    public init() {}

    /// Adds `listener`. One a composition registers is forgotten once it can
    /// do nothing more, or takes the place of one it stands in for (see
    /// ``ListenerRegistration``), when a later one is added; the others keep
    /// their order.
    public func add(_ listener: @escaping Listener) {
        let registration = CacheContext.listenerRegistration.flatMap { $0.isOpen ? $0 : nil }
        // Released after the lock: a spent listener may hold the last
        // reference to something whose deinit adds a listener here.
        let spent = listeners.withLock { entries -> [Entry] in
            var spent = Self.removeSpent(&entries)
            let entry = Entry(listener: listener, registration: registration)
            if let i = entries.firstIndex(where: { $0.registration?.isStoodIn(for: registration) ?? false }) {
                spent.append(entries[i])
                entries[i] = entry
            } else {
                entries.append(entry)
            }
            return spent
        }
        _ = spent
    }

    private static func removeSpent(_ entries: inout [Entry]) -> [Entry] {
        var spent: [Entry] = []
        entries.removeAll { entry in
            guard entry.registration?.isSpent ?? false else { return false }
            spent.append(entry)
            return true
        }
        return spent
    }

    /// Forgets the spent listeners now and returns how many are left (for tests).
    func countAfterForgettingSpent() -> Int {
        let (spent, count) = listeners.withLock { entries in (Self.removeSpent(&entries), entries.count) }
        _ = spent
        return count
    }

    /// Whether anyone listens (a level may skip subscribing to its store if not).
    public var isEmpty: Bool { listeners.withLock { $0.isEmpty } }

    /// How many listeners are registered (spent ones are forgotten as others are added).
    public var count: Int { listeners.withLock { $0.count } }

    /// Tells every listener, in registration order, and returns when all have
    /// applied it.
    public func publish(_ invalidation: CacheInvalidation<Key>) async {
        for entry in listeners.withLock({ $0 }) { await entry.listener(invalidation) }
    }

    /// Reports a write the level made itself, which its store does not report
    /// back to this process, to every listener with the write's
    /// ``CacheWriteOrigin``: the compositions the write passed through skip
    /// it, other compositions over the level drop the key. Delivered at once,
    /// in a task of its own (a listener applying it may have to wait for a
    /// write of its composition in progress, which may be this one's caller).
    ///
    /// `origin`: the write's (by default the current task's); an empty one
    /// for a write that failed in a way that may have changed the store, so
    /// that the compositions it passed through drop what they took too.
    public func reportLocalWrite(_ invalidation: CacheInvalidation<Key>,
                                 origin: CacheWriteOrigin = CacheContext.writeOrigin) {
        guard !isEmpty else { return }
        Task { await CacheContext.reportingLocalWrite(by: origin) { await self.publish(invalidation) } }
    }
}

import Synchronization
