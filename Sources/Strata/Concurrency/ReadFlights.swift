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
        /// The leader's answer, from a read begun at `startedAt`; whether the
        /// leader's task was cancelled (its error may be any error then).
        case answer(Result, startedAt: ContinuousClock.Instant, leaderCancelled: Bool)
        /// The leader's answer is not for its joiners (see ``ReadAgain``).
        case readAgain
    }

    /// Thrown to a joiner whose leader found its answer may be older than a
    /// write made meanwhile elsewhere (a load whose landing a shared store
    /// declined): the joiner may have begun after that write, so it reads again.
    struct ReadAgain: Error {}

    private struct State {
        /// The joiners of each flight in progress.
        var flights: [UInt64: [UInt64]] = [:]
        /// The flight a new caller of a key joins (detached flights are not here).
        var current: [FlightKey: UInt64] = [:]
        var nextFlight: UInt64 = 0
        var waiters = WaiterQueue<Turn>()
        /// Callers that joined a flight so far.
        var joined = 0
    }

    private let state = Mutex(State())
    /// The clock a joined entry's expiry is judged on (the levels').
    private let clock: any CacheClock

    init(clock: any CacheClock) { self.clock = clock }

    /// The key a flight is found by, when it has one: its bytes when it has
    /// them (what the disk and Redis levels store it by: two strings Swift
    /// calls equal may be two keys there), else the key itself.
    @inline(__always)
    static func flightKey(_ key: some Sendable) -> FlightKey? {
        if let convertible = key as? any CacheKeyConvertible { return FlightKey(base: AnyHashable(convertible.cacheKeyBytes)) }
        return (key as? any Hashable).map { FlightKey(base: AnyHashable($0)) }
    }

    /// Runs `read` for `key` (in the caller's task, without suspending
    /// first: a leader costs no executor hop), or joins the one in flight.
    /// `read` returns the entry and when the read that found it began (it
    /// may have joined an earlier one below). The result comes with that
    /// instant when this caller joined (`nil`: its own read).
    ///
    /// `read` also says whether its answer is for the joiners (`false`: they
    /// get ``ReadAgain``).
    func read(
        _ key: FlightKey, _ read: () async throws -> (CacheEntry<Value>?, ContinuousClock.Instant, forJoiners: Bool)
    ) async throws -> (entry: CacheEntry<Value>?, joinedReadStartedAt: ContinuousClock.Instant?) {
        var expiredAnswers = 0
        while true {
            let arrival = clock.now()
            if expiredAnswers >= 3 { return (try await read().0, nil) }  // read alone
            let lead = state.withLock { state -> UInt64? in
                guard state.current[key] == nil else { return nil }
                state.nextFlight &+= 1
                state.flights[state.nextFlight] = []
                state.current[key] = state.nextFlight
                return state.nextFlight
            }
            if let lead {
                let result: Result
                var startedAt = ContinuousClock.now
                var forJoiners = true
                do {
                    let (entry, started, shared) = try await read()
                    startedAt = started
                    forJoiners = shared
                    result = .success(entry)
                } catch { result = .failure(error) }
                finish(lead, key: key, with: forJoiners ? .answer(result, startedAt: startedAt, leaderCancelled: Task.isCancelled) : .readAgain)
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
                        state.flights[flight]?.append(id)
                        state.joined += 1
                        return .parked
                    }
                },
                cancel: { [self] id in state.withLock { $0.waiters.cancel(id) } }
            )
            switch turn {
            case .again:
                continue
            case .readAgain:
                throw ReadAgain()
            case .answer(let result, let startedAt, let leaderCancelled):
                // The leader was cancelled, not this caller (its read may have
                // failed with any error then): read again.
                if leaderCancelled && !Task.isCancelled { continue }
                // An entry that had expired when this caller arrived is not its
                // answer (alone, it would have missed there): read again.
                if case .success(let entry?) = result, let deadline = entry.expiresAt, deadline <= arrival {
                    expiredAnswers += 1
                    continue
                }
                return (try result.get(), startedAt)
            }
        }
    }

    /// Ends flight `id`: its joiners get `turn`.
    private func finish(_ id: UInt64, key: FlightKey, with turn: Turn) {
        let joiners = state.withLock { state -> [WaiterQueue<Turn>.Continuation] in
            if state.current[key] == id { state.current[key] = nil }
            return state.flights.removeValue(forKey: id)?.compactMap { state.waiters.take($0) } ?? []
        }
        for joiner in joiners { joiner.resume(returning: turn) }
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
