import Synchronization

/// Single-flight gets: concurrent gets of one key share one execution of the
/// inner get and all receive its result.
///
/// - The look-up and the insertion of an in-flight entry happen in one critical
///   section, so two callers can never both start the inner get.
/// - A waiter that is cancelled returns `CancellationError` at once; the others
///   keep waiting. The shared work is cancelled only when every waiter has gone.
/// - An entry is removed before its waiters are resumed, so a finished (or
///   cancelled) entry is never reused: the next get starts a fresh execution.
/// - Set, remove, clear and memory warnings pass straight through.
public final class PooledCache<Inner: CacheLevel>: CacheLevel where Inner.Key: Hashable {
    public typealias Key = Inner.Key
    public typealias Value = Inner.Value
    typealias Waiter = CheckedContinuation<Value?, any Error>

    struct Flight {
        let id: UInt64
        var waiters: [UInt64: Waiter]
        var task: Task<Void, Never>?
    }

    struct State {
        var flights: [Key: Flight] = [:]
        var nextID: UInt64 = 0
        /// Waiters cancelled before they were registered.
        var cancelledEarly: Set<UInt64> = []
        var executions = 0
    }

    public let inner: Inner
    private let state = Mutex(State())

    public init(_ inner: Inner) { self.inner = inner }

    public var name: String { inner.name }

    /// How many times the inner get has been started.
    public var executions: Int { state.withLock { $0.executions } }
    /// Callers waiting on the get in flight for `key` (0 when none).
    public func waiterCount(for key: Key) -> Int { state.withLock { $0.flights[key]?.waiters.count ?? 0 } }

    /// Keys with a get in flight right now.
    public var inFlightCount: Int { state.withLock { $0.flights.count } }

    public func get(_ key: Key) async throws -> Value {
        guard let value = try await getIfPresent(key) else { throw FetchError.valueNotInCache }
        return value
    }

    public func getIfPresent(_ key: Key) async throws -> Value? {
        let waiterID = state.withLock { state -> UInt64 in state.nextID += 1; return state.nextID }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                join(key: key, waiterID: waiterID, continuation: continuation)
            }
        } onCancel: {
            leave(key: key, waiterID: waiterID)
        }
    }

    private func join(key: Key, waiterID: UInt64, continuation: Waiter) {
        // The look-up and the insertion are one critical section; the task is
        // created after it (no task is ever created while the lock is held).
        let joined = state.withLock { state -> FlightJoin in
            if state.cancelledEarly.remove(waiterID) != nil { return .cancelled }
            if state.flights[key] != nil {
                state.flights[key]!.waiters[waiterID] = continuation
                return .waiting
            }
            state.nextID += 1
            state.executions += 1
            state.flights[key] = Flight(id: state.nextID, waiters: [waiterID: continuation], task: nil)
            return .started(state.nextID)
        }
        switch joined {
        case .cancelled: continuation.resume(throwing: CancellationError())
        case .waiting: break
        case .started(let flightID):
            let task = Task { [inner] in
                let result: Result<Value?, any Error>
                do { result = .success(try await inner.getIfPresent(key)) } catch { result = .failure(error) }
                self.complete(key: key, flightID: flightID, result: result)
            }
            let orphaned = state.withLock { state -> Bool in
                guard state.flights[key]?.id == flightID else { return true }  // finished, or every waiter left
                state.flights[key]!.task = task
                return false
            }
            // The flight ended before its task was stored: it finished (cancelling
            // is then a no-op) or every waiter left, and nobody wants the work.
            if orphaned { task.cancel() }
        }
    }

    private func complete(key: Key, flightID: UInt64, result: Result<Value?, any Error>) {
        let waiters = state.withLock { state -> [Waiter] in
            guard let flight = state.flights[key], flight.id == flightID else { return [] }
            state.flights[key] = nil
            return Array(flight.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    private func leave(key: Key, waiterID: UInt64) {
        let (waiter, orphanedTask) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
            guard var flight = state.flights[key], let waiter = flight.waiters.removeValue(forKey: waiterID) else {
                state.cancelledEarly.insert(waiterID)
                return (nil, nil)
            }
            if flight.waiters.isEmpty {
                state.flights[key] = nil
                return (waiter, flight.task)
            }
            state.flights[key] = flight
            return (waiter, nil)
        }
        waiter?.resume(throwing: CancellationError())
        orphanedTask?.cancel()
    }

    public func set(_ value: Value, forKey key: Key) async throws { try await inner.set(value, forKey: key) }
    public func remove(_ key: Key) async throws { try await inner.remove(key) }
    public func clear() async { await inner.clear() }
    public func onMemoryWarning() async { await inner.onMemoryWarning() }
    public func waitForPendingWrites() async { await inner.waitForPendingWrites() }
}

/// What joining a flight found (see `PooledCache.join`).
enum FlightJoin {
    case cancelled
    case waiting
    case started(UInt64)
}

extension CacheLevel where Key: Hashable {
    /// Single-flight gets: see ``PooledCache``.
    public func pooled() -> PooledCache<Self> { PooledCache(self) }

    /// Droste's name for ``pooled()``.
    public func reuseInFlight() -> PooledCache<Self> { PooledCache(self) }
}
