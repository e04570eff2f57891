/// One connection of the pool, as a state machine:
/// idle → connecting(waiters) → connected(connection) or failed(until).
///
/// A value type with no locking of its own: ``RedisClient`` changes it only
/// inside its mutex, so choosing a connection and starting (or joining) a
/// connect are one critical section. Every caller that finds the slot
/// connecting joins the same connect; only the connect's own completion
/// changes the backoff, so it doubles once per failed connect.
struct RedisConnectionSlot {
    typealias Waiter = CheckedContinuation<RedisConnection, any Error>

    enum State {
        case idle
        /// One connect is under way; these callers wait for it, by id.
        case connecting([(id: UInt64, waiter: Waiter)])
        case connected(RedisConnection)
        /// The last connect failed; callers fail fast until `until`.
        case failed(until: ContinuousClock.Instant, error: String)
    }

    /// What the caller of ``acquire(id:waiter:now:)`` does next.
    enum Decision {
        case use(RedisConnection)
        /// Waiting for a connect someone else started.
        case join
        /// Waiting for a connect that this caller must start.
        case startConnect
        case fail(RedisError)
    }

    static let initialBackoff = Duration.milliseconds(50)
    static let maximumBackoff = Duration.seconds(1)

    private(set) var state = State.idle
    /// How long the slot fails fast after its next failed connect.
    private(set) var backoff = initialBackoff

    var waiterCount: Int {
        if case .connecting(let waiters) = state { return waiters.count }
        return 0
    }

    /// Uses the connection, joins the connect under way, starts one, or fails
    /// fast within the backoff. `waiter` is kept unless the decision is `use` or `fail`.
    mutating func acquire(id: UInt64, waiter: Waiter, now: ContinuousClock.Instant) -> Decision {
        switch state {
        case .connected(let connection) where connection.isActive:
            return .use(connection)
        case .connecting(var waiters):
            waiters.append((id, waiter))
            state = .connecting(waiters)
            return .join
        case .failed(let until, let error) where now < until:
            return .fail(.unavailable("reconnecting after: \(error)"))
        case .idle, .connected, .failed:  // a closed connection is replaced, not counted as a failure
            state = .connecting([(id, waiter)])
            return .startConnect
        }
    }

    /// A cancelled caller stops waiting; returns its continuation if it was still waiting.
    mutating func removeWaiter(id: UInt64) -> Waiter? {
        guard case .connecting(var waiters) = state, let index = waiters.firstIndex(where: { $0.id == id }) else { return nil }
        let removed = waiters.remove(at: index)
        state = .connecting(waiters)
        return removed.waiter
    }

    /// The connect succeeded: installs `connection`, resets the backoff and
    /// returns the callers to hand it to.
    mutating func connected(_ connection: RedisConnection) -> [Waiter] {
        let waiters = takeWaiters()
        state = .connected(connection)
        backoff = Self.initialBackoff
        return waiters
    }

    /// The connect failed: fails fast for one backoff, then doubles it (once
    /// for this connect, however many callers waited); returns those callers.
    mutating func failed(_ error: String, now: ContinuousClock.Instant) -> [Waiter] {
        let waiters = takeWaiters()
        state = .failed(until: now + backoff, error: error)
        backoff = min(backoff * 2, Self.maximumBackoff)
        return waiters
    }

    /// Shutdown: the slot goes idle; returns its connection to close and the
    /// callers still waiting for a connect.
    mutating func shutDown() -> (RedisConnection?, [Waiter]) {
        var connection: RedisConnection?
        if case .connected(let open) = state { connection = open }
        let waiters = takeWaiters()
        state = .idle
        return (connection, waiters)
    }

    private mutating func takeWaiters() -> [Waiter] {
        guard case .connecting(let waiters) = state else { return [] }
        return waiters.map(\.waiter)
    }
}
