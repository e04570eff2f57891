import Synchronization

/// A token for one memory-warning subscription.
public struct MemoryWarningSubscription: Hashable, Sendable {
    let id: UInt64
    let source: ObjectIdentifier
}

/// A process-wide source of memory warnings. Levels subscribe with
/// ``CacheLevel/listenToMemoryWarnings(from:)``; a warning comes from
/// ``simulateWarning()`` (the explorer's `warn`, tests) or from a
/// ``LinuxMemoryPressureMonitor`` watching the real system.
public final class MemoryPressure: Sendable {
    /// The source levels subscribe to by default.
    public static let shared = MemoryPressure()

    private let handlers = Mutex<[UInt64: @Sendable () async -> Void]>([:])
    private let nextID = Atomic<UInt64>(0)
    private let delivered = Atomic<Int>(0)

    /// A source of its own, with no subscribers (``shared`` is the default one).
    public init() {}

    /// Calls `handler` on every warning until ``unsubscribe(_:)``.
    public func subscribe(_ handler: @escaping @Sendable () async -> Void) -> MemoryWarningSubscription {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).newValue
        handlers.withLock { $0[id] = handler }
        return MemoryWarningSubscription(id: id, source: ObjectIdentifier(self))
    }

    /// Ends a subscription; unknown tokens are ignored.
    public func unsubscribe(_ subscription: MemoryWarningSubscription) {
        guard subscription.source == ObjectIdentifier(self) else { return }
        _ = handlers.withLock { $0.removeValue(forKey: subscription.id) }
    }

    /// Subscriptions alive now.
    public var subscriberCount: Int { handlers.withLock { $0.count } }
    /// Warnings delivered since creation.
    public var warningsDelivered: Int { delivered.load(ordering: .relaxed) }

    /// Delivers a warning to every subscriber concurrently and returns when all
    /// have handled it.
    public func simulateWarning() async {
        let current = handlers.withLock { Array($0.values) }
        delivered.add(1, ordering: .relaxed)
        await withTaskGroup(of: Void.self) { group in
            for handler in current { group.addTask { await handler() } }
        }
    }
}

/// Sources created by ``MemoryPressure`` users, for the free function below.
private let knownSources = Mutex<[ObjectIdentifier: MemoryPressureReference]>([:])

private struct MemoryPressureReference: Sendable {
    weak var source: MemoryPressure?
}

extension CacheLevel {
    /// Calls ``onMemoryWarning()`` on every warning of `source` until
    /// ``unsubscribeToMemoryWarnings(_:)``. The subscription keeps the level alive.
    public func listenToMemoryWarnings(from source: MemoryPressure = .shared) -> MemoryWarningSubscription {
        knownSources.withLock { $0[ObjectIdentifier(source)] = MemoryPressureReference(source: source) }
        return source.subscribe { await self.onMemoryWarning() }
    }
}

/// Ends a subscription made with ``CacheLevel/listenToMemoryWarnings(from:)``.
public func unsubscribeToMemoryWarnings(_ subscription: MemoryWarningSubscription) {
    let source = knownSources.withLock { $0[subscription.source]?.source }
    source?.unsubscribe(subscription)
}
