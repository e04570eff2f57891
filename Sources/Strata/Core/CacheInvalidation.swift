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

    private let listeners = Mutex<[Listener]>([])

    public init() {}

    public func add(_ listener: @escaping Listener) { listeners.withLock { $0.append(listener) } }

    /// Whether anyone listens (a level may skip subscribing to its store if not).
    public var isEmpty: Bool { listeners.withLock { $0.isEmpty } }

    /// Tells every listener, in registration order, and returns when all have
    /// applied it.
    public func publish(_ invalidation: CacheInvalidation<Key>) async {
        for listener in listeners.withLock({ $0 }) { await listener(invalidation) }
    }
}

import Synchronization
