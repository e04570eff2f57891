import Synchronization

/// Counters of one instrumented level at one moment.
public struct StatisticsSnapshot: Sendable, Equatable, Codable {
    public var gets = 0
    public var hits = 0
    public var misses = 0
    public var errors = 0
    public var sets = 0
    public var setErrors = 0
    public var removes = 0
    /// Removes that failed (counted apart from get errors, so they do not
    /// lower the hit ratio).
    public var removeErrors = 0
    public var clears = 0
    public var memoryWarnings = 0
    public var backfills = 0
    public var backfillFailures = 0
    /// Get latency percentiles in nanoseconds (`nil` before the first get).
    public var getP50: UInt64?
    public var getP99: UInt64?

    public init() {}

    /// Hits over gets that completed (0 when none).
    public var hitRatio: Double {
        let answered = hits + misses + errors
        return answered == 0 ? 0 : Double(hits) / Double(answered)
    }
}

/// Live counters of an ``InstrumentedCache``: atomic, so recording never takes a
/// lock and a snapshot can be read at any time without blocking the cache.
public final class LevelStatistics: Sendable {
    public let name: String
    @usableFromInline let gets = Atomic<Int>(0), hits = Atomic<Int>(0), misses = Atomic<Int>(0)
    @usableFromInline let errors = Atomic<Int>(0), sets = Atomic<Int>(0), setErrors = Atomic<Int>(0)
    @usableFromInline let removes = Atomic<Int>(0), removeErrors = Atomic<Int>(0), clears = Atomic<Int>(0), memoryWarnings = Atomic<Int>(0)
    @usableFromInline let backfills = Atomic<Int>(0), backfillFailures = Atomic<Int>(0)
    /// Latency of gets.
    public let getLatency = LatencyHistogram()

    private let lastErrorText = Mutex<String?>(nil)

    /// The most recent error this level threw (operation, key and message).
    public var lastError: String? { lastErrorText.withLock { $0 } }

    @usableFromInline func recordError(_ operation: CacheOperation, key: String, _ error: any Error) {
        let text = "\(operation.rawValue) \(key): \(error)"
        lastErrorText.withLock { $0 = text }
    }

    private let observerCount = Atomic<Int>(0)
    private let observers = Mutex<[UInt64: @Sendable (CacheEvent) -> Void]>([:])
    private let nextObserver = Atomic<UInt64>(0)

    public init(name: String) { self.name = name }

    /// The counters now.
    public func snapshot() -> StatisticsSnapshot {
        var s = StatisticsSnapshot()
        s.gets = gets.load(ordering: .relaxed)
        s.hits = hits.load(ordering: .relaxed)
        s.misses = misses.load(ordering: .relaxed)
        s.errors = errors.load(ordering: .relaxed)
        s.sets = sets.load(ordering: .relaxed)
        s.setErrors = setErrors.load(ordering: .relaxed)
        s.removes = removes.load(ordering: .relaxed)
        s.removeErrors = removeErrors.load(ordering: .relaxed)
        s.clears = clears.load(ordering: .relaxed)
        s.memoryWarnings = memoryWarnings.load(ordering: .relaxed)
        s.backfills = backfills.load(ordering: .relaxed)
        s.backfillFailures = backfillFailures.load(ordering: .relaxed)
        let latency = getLatency.snapshot()
        s.getP50 = latency.percentile(0.5)
        s.getP99 = latency.percentile(0.99)
        return s
    }

    /// Sets every counter back to zero.
    public func reset() {
        gets.store(0, ordering: .relaxed); hits.store(0, ordering: .relaxed)
        misses.store(0, ordering: .relaxed); errors.store(0, ordering: .relaxed)
        sets.store(0, ordering: .relaxed); setErrors.store(0, ordering: .relaxed)
        removes.store(0, ordering: .relaxed); removeErrors.store(0, ordering: .relaxed); clears.store(0, ordering: .relaxed)
        memoryWarnings.store(0, ordering: .relaxed); backfills.store(0, ordering: .relaxed)
        backfillFailures.store(0, ordering: .relaxed)
        lastErrorText.withLock { $0 = nil }
        getLatency.reset()
    }

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
    @usableFromInline var wantsEvents: Bool { observerCount.load(ordering: .relaxed) > 0 || CacheContext.trace != nil }

    @usableFromInline func emit(_ event: CacheEvent) {
        CacheContext.trace?.append(event)
        guard observerCount.load(ordering: .relaxed) > 0 else { return }
        for observer in observers.withLock({ Array($0.values) }) { observer(event) }
    }
}

extension Atomic<Int> {
    /// Adds one (relaxed).
    @inlinable func increment() { add(1, ordering: .relaxed) }
}
