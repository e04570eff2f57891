import Synchronization

/// A counting semaphore for tasks: waiters are served first come, first
/// served, and a cancelled waiter leaves the queue with `CancellationError`.
public final class AsyncSemaphore: Sendable {
    struct State {
        var available: Int
        var waiters = WaiterQueue<Void>()
    }

    private let state: Mutex<State>
    /// The number of permits.
    public let limit: Int

    /// A semaphore with `limit` permits, all available; `limit` must be at least 1.
    public init(limit: Int) {
        precondition(limit > 0, "AsyncSemaphore needs at least one permit")
        self.limit = limit
        self.state = Mutex(State(available: limit))
    }

    /// Takes a permit, waiting in line if none is free.
    public func acquire() async throws {
        let took = state.withLock { state -> Bool in
            guard state.available > 0 && state.waiters.parkedCount == 0 else { return false }
            state.available -= 1
            return true
        }
        if took { return }
        try await suspendAsWaiter(
            reserve: { state.withLock { $0.waiters.reserve() } },
            arrive: { id, continuation in
                state.withLock { state -> WaiterArrival<Void> in
                    // A permit may have been released since the fast path.
                    if state.available > 0 && state.waiters.parkedCount == 0 {
                        guard state.waiters.admit(id) else { return .resume(continuation, .failure(CancellationError())) }
                        state.available -= 1
                        return .resume(continuation, .success(()))
                    }
                    return state.waiters.park(id, continuation)
                        ? .parked : .resume(continuation, .failure(CancellationError()))
                }
            },
            cancel: { [self] id in state.withLock { $0.waiters.cancel(id) } }
        )
    }

    /// Returns a permit, handing it to the longest waiter if there is one.
    public func release() {
        let next = state.withLock { state -> WaiterQueue<Void>.Continuation? in
            if let first = state.waiters.resumeFirst() { return first }
            state.available += 1
            return nil
        }
        next?.resume()
    }

    /// Runs `body` holding a permit.
    public func withPermit<T>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }

    /// Permits free right now.
    public var available: Int { state.withLock { $0.available } }
    /// Tasks waiting for a permit.
    public var waiting: Int { state.withLock { $0.waiters.parkedCount } }
    /// Waiter ids still tracked (must return to 0 when nobody waits); for tests.
    package var trackedWaiters: Int { state.withLock { $0.waiters.trackedCount } }
}
