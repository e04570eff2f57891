import DequeModule
import Synchronization

/// The path of one request through instrumented levels, collected when a
/// caller runs the request inside `CacheContext.$trace.withValue(trace)`.
/// Back-fills started by the request append to the same trace.
public final class RequestTrace: Sendable {
    private struct State {
        var events: [CacheEvent] = []
        /// Parked waiters and the event count each waits for.
        var wanted: [UInt64: Int] = [:]
        var waiters = WaiterQueue<Void>()
        /// A level below the get being observed found its entry expired.
        var expiredNoted = false
    }

    private let state = Mutex(State())

    /// Traces alive now: while there are none, instrumented levels skip
    /// reading the task-local ``CacheContext/trace`` on every get.
    @usableFromInline static let liveCount = Atomic<Int>(0)

    /// An empty trace; run a request under it with ``record(_:)``.
    public init() { Self.liveCount.add(1, ordering: .relaxed) }

    deinit { Self.liveCount.subtract(1, ordering: .relaxed) }

    /// Adds `event` to the trace and wakes those waiting for it; levels call it.
    public func append(_ event: CacheEvent) {
        let ready = state.withLock { state -> [WaiterQueue<Void>.Continuation] in
            state.events.append(event)
            guard !state.wanted.isEmpty else { return [] }
            let count = state.events.count
            let due = state.wanted.filter { $0.value <= count }.map(\.key)
            return due.compactMap { id in
                state.wanted[id] = nil
                return state.waiters.take(id)
            }
        }
        for waiter in ready { waiter.resume() }
    }

    /// Notes that the level being asked found its entry expired
    /// (``CacheContext/noteExpired()``); the instrumented level around it
    /// takes the note when it reports the miss.
    public func noteExpired() { state.withLock { $0.expiredNoted = true } }

    /// Whether an expiry was noted since the last call (and forgets it).
    public func takeExpiredNote() -> Bool {
        state.withLock { state in
            defer { state.expiredNoted = false }
            return state.expiredNoted
        }
    }

    /// The events so far, in the order they finished.
    public var events: [CacheEvent] { state.withLock { $0.events } }

    /// Runs `body` with this trace attached to every instrumented level it reaches.
    public func record<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        try await CacheContext.$trace.withValue(self) { try await body() }
    }

    /// Returns once the trace holds at least `count` events, or after `timeout`
    /// (back-fills finish after the get returns; this waits for them).
    public func waitForEvents(count: Int, timeout: Duration) async {
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        try? await suspendAsWaiter(
            reserve: { state.withLock { $0.waiters.reserve() } },
            arrive: { id, continuation in
                let arrival = state.withLock { state -> WaiterArrival<Void> in
                    if state.events.count >= count {
                        return .resume(continuation, state.waiters.admit(id) ? .success(()) : .failure(CancellationError()))
                    }
                    guard state.waiters.park(id, continuation) else { return .resume(continuation, .failure(CancellationError())) }
                    state.wanted[id] = count
                    return .parked
                }
                if case .parked = arrival {
                    timer = Task { [weak self] in
                        guard (try? await Task.sleep(for: timeout)) != nil else { return }
                        self?.expire(id)
                    }
                }
                return arrival
            },
            cancel: { [self] id in
                state.withLock { state in
                    state.wanted[id] = nil
                    return state.waiters.cancel(id)
                }
            }
        )
    }

    /// Lets waiter `id` go: its timeout has passed.
    private func expire(_ id: UInt64) {
        let waiter = state.withLock { state -> WaiterQueue<Void>.Continuation? in
            state.wanted[id] = nil
            return state.waiters.take(id)
        }
        waiter?.resume()
    }
}
