import Synchronization

/// The events of one instrumented level: observers, async streams and the
/// last error (Caffeine keeps listeners apart from `CacheStats` the same way;
/// the counts are in ``StatisticsCounter``).
public final class CacheEventBus: Sendable {
    /// The level's name, stamped on every event.
    public let name: String
    private let lastErrorText = Mutex<String?>(nil)
    private let observerCount = Atomic<Int>(0)
    private let observers = Mutex<[UInt64: @Sendable (CacheEvent) -> Void]>([:])
    private let nextObserver = Atomic<UInt64>(0)

    public init(name: String) { self.name = name }

    /// The most recent error the level threw (operation, key and message).
    public var lastError: String? { lastErrorText.withLock { $0 } }

    @usableFromInline func recordError(_ operation: CacheOperation, key: String, _ error: any Error) {
        let text = "\(operation.rawValue) \(key): \(error)"
        lastErrorText.withLock { $0 = text }
    }

    /// Forgets the last error.
    public func resetLastError() { lastErrorText.withLock { $0 = nil } }

    /// Calls `observer` for every event from now on (on the requesting task;
    /// keep it short). Returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (CacheEvent) -> Void) -> UInt64 {
        let id = nextObserver.wrappingAdd(1, ordering: .relaxed).newValue
        observers.withLock { $0[id] = observer }
        observerCount.add(1, ordering: .relaxed)
        return id
    }

    public func removeObserver(_ id: UInt64) {
        if observers.withLock({ $0.removeValue(forKey: id) }) != nil {
            observerCount.subtract(1, ordering: .relaxed)
        }
    }

    /// Events as an async stream (newest kept when the consumer falls behind).
    public func events(bufferingNewest limit: Int = 1024) -> AsyncStream<CacheEvent> {
        AsyncStream(bufferingPolicy: .bufferingNewest(limit)) { continuation in
            let id = addObserver { continuation.yield($0) }
            continuation.onTermination = { [weak self] _ in self?.removeObserver(id) }
        }
    }

    /// Whether anyone wants events (observers or a request trace).
    /// The task-local trace is read only while some ``RequestTrace`` exists.
    @usableFromInline var wantsEvents: Bool {
        observerCount.load(ordering: .relaxed) > 0
            || (RequestTrace.liveCount.load(ordering: .relaxed) > 0 && CacheContext.trace != nil)
    }

    @usableFromInline func emit(_ event: CacheEvent) {
        CacheContext.trace?.append(event)
        guard observerCount.load(ordering: .relaxed) > 0 else { return }
        for observer in observers.withLock({ Array($0.values) }) { observer(event) }
    }
}
