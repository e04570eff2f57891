import Synchronization

/// What an ``InstrumentedCache`` records, in two parts:
///
/// - ``counters``: exact, striped counts and sampled get latency
///   (``StatisticsCounter``); ``snapshot()`` reads them without blocking the cache;
/// - ``bus``: events for observers, streams and traces, and the last error
///   (``CacheEventBus``).
///
/// The methods below forward to one or the other.
public final class LevelStatistics: Sendable {
    /// The instrumented level's name.
    public let name: String
    /// Counts and latency.
    public let counters: StatisticsCounter
    /// Events and the last error.
    public let bus: CacheEventBus

    /// Statistics for a level named `name`; `levelCounters` is read at
    /// snapshot time (see ``LevelCounterReporting``).
    public init(name: String, latencySampleRate: Int = 16, levelCounters: (@Sendable () -> [String: Int])? = nil) {
        self.name = name
        self.counters = StatisticsCounter(latencySampleRate: latencySampleRate, levelCounters: levelCounters)
        self.bus = CacheEventBus(name: name)
    }

    /// Latency of the timed gets.
    public var getLatency: LatencyHistogram { counters.getLatency }

    /// The counters now.
    public func snapshot() -> StatisticsSnapshot { counters.snapshot() }

    /// Sets every counter back to zero and forgets the last error.
    public func reset() {
        resets.add(1, ordering: .sequentiallyConsistent)  // odd while resetting
        counters.reset()
        bus.resetLastError()
        resets.add(1, ordering: .sequentiallyConsistent)
    }

    private let resets = Atomic<Int>(0)

    /// The counters now, and how many resets came before them (twice the
    /// count: a reader that sees it change knows the counters restarted
    /// from zero, as an exporter of deltas must).
    public func snapshotWithResets() -> (snapshot: StatisticsSnapshot, latency: LatencySnapshot, resets: Int) {
        while true {
            let before = resets.load(ordering: .sequentiallyConsistent)
            let snapshot = counters.snapshot(), latency = getLatency.snapshot()
            if before % 2 == 0 && resets.load(ordering: .sequentiallyConsistent) == before {
                return (snapshot, latency, before)
            }
        }
    }

    /// The most recent error this level threw (operation, key and message).
    public var lastError: String? { bus.lastError }

    /// Calls `observer` for every event from now on (on the requesting task;
    /// keep it short). Returns a token for ``removeObserver(_:)``.
    @discardableResult
    public func addObserver(_ observer: @escaping @Sendable (CacheEvent) -> Void) -> UInt64 {
        bus.addObserver(observer)
    }

    /// Stops calling the observer registered under `id`.
    public func removeObserver(_ id: UInt64) { bus.removeObserver(id) }

    /// Events as an async stream (newest kept when the consumer falls behind).
    public func events(bufferingNewest limit: Int = 1024) -> AsyncStream<CacheEvent> {
        bus.events(bufferingNewest: limit)
    }
}
