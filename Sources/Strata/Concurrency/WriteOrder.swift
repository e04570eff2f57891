import Synchronization

/// Orders a composition's back-fills after its writes, per key.
///
/// The rule: a back-fill may land only if no write to its key (set, remove,
/// clear, memory warning) through the composition was in progress when the
/// read it carries began, and none has started since. Keys are hashed onto
/// stripes; a stripe counts the writes started on it and those still in
/// progress, and clears move a level-wide epoch.
///
/// - A read takes a ``Ticket`` before it asks the lower level (`nil` when a
///   write is in progress: that read must not back-fill).
/// - A back-fill ``land(_:_:)``s with its ticket: the check and the upper
///   level's write happen while the stripe is marked *landing*, and a write
///   that starts meanwhile waits for the landing to finish before it touches
///   any level. So either the back-fill lands entirely before the write (which
///   then overwrites or removes it), or it sees the write and is dropped.
/// - Writes that do not meet a landing pay two short critical sections; the
///   hit path never comes here.
@usableFromInline
final class WriteOrder: Sendable {
    @usableFromInline static var stripeCount: Int { 64 }

    struct Stripe {
        var started: UInt64 = 0
        var inProgress = 0
        var landing = false
    }

    struct State {
        var stripes = [Stripe](repeating: Stripe(), count: WriteOrder.stripeCount)
        var epoch: UInt64 = 0
        var clearsInProgress = 0
        var landings = 0
        /// Writers and back-fills waiting for a landing to finish.
        var waiters = WaiterQueue<Void>()
    }

    /// What a read saw before it asked the lower level.
    @usableFromInline
    struct Ticket: Sendable {
        let stripe: Int
        let started: UInt64
        let epoch: UInt64
    }

    private let state = Mutex(State())

    @usableFromInline init() {}

    @usableFromInline
    static func stripe(of key: some Sendable) -> Int {
        guard let hashable = key as? any Hashable else { return 0 }
        return Int(UInt(bitPattern: hashable.hashValue) % UInt(stripeCount))
    }

    /// Taken before a read of the lower level; `nil` when a write to the key's
    /// stripe (or a clear) is in progress.
    @usableFromInline
    func beginRead(_ key: some Sendable) -> Ticket? {
        let stripe = Self.stripe(of: key)
        return state.withLock { state in
            let s = state.stripes[stripe]
            guard s.inProgress == 0 && state.clearsInProgress == 0 else { return nil }
            return Ticket(stripe: stripe, started: s.started, epoch: state.epoch)
        }
    }

    /// Runs `write` (the back-fill into the upper level) if the ticket is
    /// still valid; returns whether it ran.
    @usableFromInline
    func land(_ ticket: Ticket, _ write: () async throws -> Void) async throws -> Bool {
        let admitted = await whenReady { state -> Bool? in
            guard !state.stripes[ticket.stripe].landing else { return nil }
            let s = state.stripes[ticket.stripe]
            guard s.started == ticket.started && s.inProgress == 0 && state.epoch == ticket.epoch
                    && state.clearsInProgress == 0 else { return false }
            state.stripes[ticket.stripe].landing = true
            state.landings += 1
            return true
        }
        guard admitted else { return false }
        defer {
            let waiters = state.withLock { state in
                state.stripes[ticket.stripe].landing = false
                state.landings -= 1
                return state.waiters.resumeAll()
            }
            for waiter in waiters { waiter.resume() }
        }
        try await write()
        return true
    }

    /// Marks a write to `key` as started, after any landing on its stripe has
    /// finished. Pair with ``endWrite(_:)``.
    @usableFromInline
    func beginWrite(_ key: some Sendable) async -> Int {
        let stripe = Self.stripe(of: key)
        let marked = state.withLock { state -> Bool in
            state.stripes[stripe].started &+= 1
            state.stripes[stripe].inProgress += 1
            return !state.stripes[stripe].landing
        }
        if !marked {
            _ = await whenReady { state -> Bool? in state.stripes[stripe].landing ? nil : true }
        }
        return stripe
    }

    @usableFromInline
    func endWrite(_ stripe: Int) {
        state.withLock { $0.stripes[stripe].inProgress -= 1 }
    }

    /// Marks a clear as started, after every landing has finished. Pair with ``endClear()``.
    @usableFromInline
    func beginClear() async {
        state.withLock { state in
            state.epoch &+= 1
            state.clearsInProgress += 1
        }
        _ = await whenReady { state -> Bool? in state.landings == 0 ? true : nil }
    }

    @usableFromInline
    func endClear() {
        state.withLock { $0.clearsInProgress -= 1 }
    }

    /// Runs `attempt` under the lock until it returns a result, parking between
    /// tries until a landing finishes. Not cancellable: a landing is one write
    /// of one level, and the order must hold even for a cancelled caller.
    private func whenReady<R: Sendable>(_ attempt: (inout State) -> R?) async -> R {
        while true {
            var result: R?
            try? await suspendAsWaiter(
                reserve: { state.withLock { $0.waiters.reserve() } },
                arrive: { id, continuation in
                    state.withLock { state -> WaiterArrival<Void> in
                        if let ready = attempt(&state) {
                            result = ready
                            _ = state.waiters.admit(id)
                            return .resume(continuation, .success(()))
                        }
                        return state.waiters.park(id, continuation) ? .parked : .resume(continuation, .success(()))
                    }
                },
                cancel: { _ in nil }
            )
            if let result { return result }
        }
    }
}
