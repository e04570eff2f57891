import Synchronization

/// Single-flight of a stack's reads of its lower level: concurrent misses of
/// one key through a stack make one read below, and every caller gets its
/// answer (FusionCache's stampede protection; ``PooledCache`` does the same
/// for any one level).
///
/// - The first caller of a key leads: it runs the read (and the stack's
///   back-fill) in its own task. Callers that arrive while it runs join it
///   and are answered with its result and when its read began, so that a
///   back-fill above them is judged by that read (``CacheContext/readStart``).
/// - **A write ends joining.** The stack detaches the flights of a key it
///   writes (or of every key, for a clear or a change reported from
///   elsewhere), when the write starts and when it ends: a get that arrives
///   after a write has finished never receives a value read before it.
/// - A joiner that is cancelled leaves at once; the leader's read goes on. A
///   joiner whose leader was cancelled reads again itself.
/// - Keys that are not `Hashable` are not shared.
final class ReadFlights<Value: Sendable>: Sendable {
    typealias Result = Swift.Result<CacheEntry<Value>?, any Error>

    /// What a caller is told when it arrives or is resumed.
    enum Turn: Sendable {
        /// The flight ended before the caller could join it.
        case again
        /// The leader's answer, from a read begun at `startedAt`.
        case answer(Result, startedAt: ContinuousClock.Instant)
    }

    private struct Flight {
        let startedAt: ContinuousClock.Instant
        var joiners: [UInt64] = []
    }

    private struct State {
        var flights: [UInt64: Flight] = [:]
        /// The flight a new caller of a key joins (detached flights are not here).
        var current: [FlightKey: UInt64] = [:]
        var nextFlight: UInt64 = 0
        var waiters = WaiterQueue<Turn>()
        /// Callers that joined a flight so far.
        var joined = 0
    }

    private let state = Mutex(State())

    init() {}

    /// The key a flight is found by, when it has one.
    @inline(__always)
    static func flightKey(_ key: some Sendable) -> FlightKey? {
        (key as? any Hashable).map { FlightKey(base: AnyHashable($0)) }
    }

    /// Runs `read` for `key` (in the caller's task, without suspending
    /// first: a leader costs no executor hop), or joins the one in flight.
    /// The result comes with when the read that produced it began (`nil`:
    /// this caller's own read).
    func read(
        _ key: FlightKey, _ read: () async throws -> CacheEntry<Value>?
    ) async throws -> (entry: CacheEntry<Value>?, joinedReadStartedAt: ContinuousClock.Instant?) {
        var expiredAnswers = 0
        while true {
            let arrival = SystemClock().now()
            let now = ContinuousClock.now
            let lead = state.withLock { state -> UInt64? in
                guard state.current[key] == nil else { return nil }
                state.nextFlight &+= 1
                state.flights[state.nextFlight] = Flight(startedAt: now)
                state.current[key] = state.nextFlight
                return state.nextFlight
            }
            if let lead {
                let result: Result
                do { result = .success(try await read()) } catch { result = .failure(error) }
                finish(lead, key: key, with: result)
                return (try result.get(), nil)
            }
            let turn = try await suspendAsWaiter(
                reserve: { state.withLock { $0.waiters.reserve() } },
                arrive: { id, continuation in
                    state.withLock { state -> WaiterArrival<Turn> in
                        guard let flight = state.current[key] else {
                            // It ended meanwhile: try again.
                            guard state.waiters.admit(id) else { return .resume(continuation, .failure(CancellationError())) }
                            return .resume(continuation, .success(.again))
                        }
                        guard state.waiters.park(id, continuation) else {
                            return .resume(continuation, .failure(CancellationError()))
                        }
                        state.flights[flight]?.joiners.append(id)
                        state.joined += 1
                        return .parked
                    }
                },
                cancel: { [self] id in state.withLock { $0.waiters.cancel(id) } }
            )
            switch turn {
            case .again:
                continue
            case .answer(let result, let startedAt):
                // The leader was cancelled, not this caller: read again.
                if case .failure(let error) = result, error is CancellationError, !Task.isCancelled { continue }
                // An entry that had expired when this caller arrived is not its
                // answer (alone, it would have missed there): read again.
                if case .success(let entry?) = result, let deadline = entry.expiresAt, deadline <= arrival {
                    expiredAnswers += 1
                    if expiredAnswers < 3 { continue }
                    return (nil, startedAt)
                }
                return (try result.get(), startedAt)
            }
        }
    }

    /// Ends flight `id`: its joiners get `result`.
    private func finish(_ id: UInt64, key: FlightKey, with result: Result) {
        let (joiners, startedAt) = state.withLock { state -> ([WaiterQueue<Turn>.Continuation], ContinuousClock.Instant) in
            if state.current[key] == id { state.current[key] = nil }
            guard let flight = state.flights.removeValue(forKey: id) else { return ([], .now) }
            return (flight.joiners.compactMap { state.waiters.take($0) }, flight.startedAt)
        }
        for joiner in joiners { joiner.resume(returning: .answer(result, startedAt: startedAt)) }
    }

    /// New callers of `key` (of every key when `nil`) start a read of their own.
    func detach(_ key: FlightKey?) {
        state.withLock { state in
            if let key { state.current[key] = nil } else { state.current.removeAll() }
        }
    }

    /// Flights in progress (joinable or detached), for tests.
    var inFlight: Int { state.withLock { $0.flights.count } }

    /// Callers that joined a flight so far, for tests.
    var joined: Int { state.withLock { $0.joined } }
}

/// A key flights are found by: the stack's key, as `AnyHashable`.
struct FlightKey: Hashable, @unchecked Sendable {
    // Safe: built only by ``ReadFlights/flightKey(_:)`` from a key that is
    // `Sendable` (every level's `Key` is), and never mutated: the box holds
    // nothing that is not safe to share.
    let base: AnyHashable
}
