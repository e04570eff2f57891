import DequeModule
import Synchronization

/// Orders a composition's writes and back-fills per key (an uncontended write
/// pays two short critical sections; hits never come here), by three rules:
/// 1. **Writes to one key are serialised.** Keys hash onto stripes; a set or
///    remove holds its stripe for both levels, a clear (or memory warning) all:
///    concurrent sets never leave one value above and the other below.
/// 2. **A back-fill never undoes a write.** It lands only if no write to its
///    key was in progress when its read began and none started since (each
///    stripe counts writes; clears move an epoch). A read takes a ``Ticket``
///    first (`nil` during a write); ``land(_:readStart:_:undo:)`` checks it and
///    writes holding the stripe: wholly before the next write, or dropped.
/// 3. **A back-fill never carries a value changed elsewhere since its read
///    began.** Changes a shared store reports are noted per key
///    (``noteChanged(_:)``), not per stripe (Redis reports every write under
///    its prefix: most back-fills would drop). The latest 4,096 are kept by
///    hash; a read older than a forgotten change counts as changed (its
///    back-fill dropped: only a later read lost).
@usableFromInline
final class WriteOrder: Sendable {
    @usableFromInline static var stripeCount: Int { 256 }

    struct Stripe {
        /// Writes started on this stripe.
        var started: UInt64 = 0
        /// A write or a landing holds the stripe.
        var held = false
        /// The holder is a write.
        var writing = false
    }

    struct State {
        var stripes = [Stripe](repeating: Stripe(), count: WriteOrder.stripeCount)
        var epoch: UInt64 = 0
        /// Changes reported from elsewhere, numbered.
        var changes: UInt64 = 0
        /// The latest change of each recently changed key hash.
        var changedAt: [Int: UInt64] = [:]
        var changeOrder = Deque<(hash: Int, change: UInt64)>()
        /// Changes up to this one are no longer looked up by key.
        var forgottenThrough: UInt64 = 0
        /// Times the upper level lost coherence (``noteCoherenceLost()``).
        var coherenceLost: UInt64 = 0

        func changed(_ hash: Int, since: UInt64) -> Bool {
            if let change = changedAt[hash] { return change > since }
            return forgottenThrough > since
        }
        /// A clear holds every stripe.
        var clearing = false
        /// Stripes held right now.
        var held = 0
        /// Writers and back-fills waiting for a stripe to be released.
        var waiters = WaiterQueue<Void>()

        mutating func hold(_ stripe: Int) {
            stripes[stripe].held = true
            held += 1
        }
    }

    /// What a read saw before it asked the lower level.
    @usableFromInline
    struct Ticket: Sendable {
        let stripe: Int
        let started: UInt64
        let epoch: UInt64
        let hash: Int
        /// Changes reported from elsewhere when the read began.
        let changes: UInt64
        /// ``State/coherenceLost`` when the read began.
        let coherenceLost: UInt64
        /// When the read began: one older than ``CacheContext/backfillAgeLimit`` is not back-filled.
        let startedAt: ContinuousClock.Instant
    }

    /// Changed keys remembered by hash (see the notes above).
    static var changesRemembered: Int { 4096 }

    private let state = Mutex(State())

    @usableFromInline init() {}

    @usableFromInline
    static func stripe(of key: some Sendable) -> Int { stripe(ofHash: hash(of: key)) }

    static func stripe(ofHash hash: Int) -> Int { Int(UInt(bitPattern: hash) % UInt(stripeCount)) }

    static func hash(of key: some Sendable) -> Int {
        (key as? any Hashable)?.hashValue ?? 0
    }

    /// Taken before a read of the lower level; `nil` during a write to its stripe or a clear.
    @usableFromInline
    func beginRead(_ key: some Sendable) -> Ticket? {
        let hash = Self.hash(of: key)
        let stripe = Self.stripe(ofHash: hash)
        let now = ContinuousClock.now
        return state.withLock { state in
            let s = state.stripes[stripe]
            // A write in progress: this read may see either value, so it must not back-fill.
            guard !s.writing && !state.clearing else { return nil }
            return Ticket(stripe: stripe, started: s.started, epoch: state.epoch, hash: hash, changes: state.changes,
                          coherenceLost: state.coherenceLost, startedAt: now)
        }
    }

    /// A shared store reports `key` changed elsewhere: drops its back-fills begun before.
    @usableFromInline
    func noteChanged(_ key: some Sendable) {
        let hash = Self.hash(of: key)
        state.withLock { state in
            state.changes &+= 1
            state.changedAt[hash] = state.changes
            state.changeOrder.append((hash, state.changes))
            // Drop superseded entries now and then: a hot key must not crowd out others.
            if state.changeOrder.count > 2 * Self.changesRemembered {
                state.changeOrder = Deque(state.changeOrder.filter { state.changedAt[$0.hash] == $0.change })
            }
            // Forget the least recently changed keys beyond the limit.
            while state.changedAt.count > Self.changesRemembered, let oldest = state.changeOrder.popFirst() {
                guard state.changedAt[oldest.hash] == oldest.change else { continue }  // superseded: nothing forgotten
                state.changedAt[oldest.hash] = nil
                state.forgottenThrough = oldest.change
            }
        }
    }

    /// Nothing keeps the upper level coherent now (``CacheLevel/lostCoherence()``):
    /// back-fills begun before are dropped, one landing meanwhile undone.
    func noteCoherenceLost() {
        state.withLock { $0.coherenceLost &+= 1 }
        noteChangedAll()
    }

    /// A shared store reports that anything may have changed: drops back-fills begun before.
    @usableFromInline
    func noteChangedAll() {
        state.withLock { state in
            state.changes &+= 1
            state.forgottenThrough = state.changes
            state.changedAt.removeAll()
            state.changeOrder.removeAll()
        }
    }

    /// Whether no write, clear or reported change touched the ticket's key since
    /// (`false` for `nil`), so what was read since is no older than before.
    func isCurrent(_ ticket: Ticket?) -> Bool {
        guard let ticket else { return false }
        return state.withLock { state in
            state.stripes[ticket.stripe].started == ticket.started && state.epoch == ticket.epoch
                && !state.changed(ticket.hash, since: ticket.changes)
        }
    }

    /// Runs `write` (the back-fill) with when its read began, if the ticket is
    /// still valid; returns whether it ran. If the upper level lost coherence
    /// meanwhile, runs `undo` before releasing the stripe (it wrote old data).
    /// `asWrite`: it counts as a write (a refresh replacing a live value):
    /// back-fills of reads begun before it are dropped.
    @usableFromInline
    func land(_ ticket: Ticket, readStart: ContinuousClock.Instant? = nil, asWrite: Bool = false,
              _ write: (ContinuousClock.Instant) async throws -> Void,
              undo: () -> Void) async throws -> Bool {
        // The read whose answer it carries may have begun before the ticket (a pooled read joined).
        let startedAt = min(ticket.startedAt, readStart ?? ticket.startedAt)
        // Too old: what stops it in a shared store (a tombstone) may be gone.
        guard ContinuousClock.now - startedAt < CacheContext.backfillAgeLimit else { return false }
        let admitted = await whenReady { state -> Bool? in
            let s = state.stripes[ticket.stripe]
            guard s.started == ticket.started && state.epoch == ticket.epoch,
                  !state.changed(ticket.hash, since: ticket.changes) else { return false }
            guard !s.held && !state.clearing else { return nil }
            state.hold(ticket.stripe)
            if asWrite {
                state.stripes[ticket.stripe].writing = true
                state.stripes[ticket.stripe].started &+= 1
            }
            return true
        }
        guard admitted else { return false }
        defer { release(ticket.stripe) }
        // Also after a partial failure (a composition writes lower, then upper may refuse).
        defer { if state.withLock({ $0.coherenceLost != ticket.coherenceLost }) { undo() } }
        try await write(startedAt)
        return true
    }

    /// Writes, clears and landings ended so far (any key): a loading get
    /// that missed looks at the upper level again before it loads only if
    /// one ended since (what it ended may be there now).
    let ended = Atomic<UInt64>(0)

    private func release(_ stripe: Int) {
        defer { ended.add(1, ordering: .releasing) }
        let waiters = state.withLock { state in
            state.stripes[stripe].held = false
            state.stripes[stripe].writing = false
            state.held -= 1
            return state.waiters.resumeAll()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Holds `key`'s stripe for a write, once no other write, landing or clear
    /// holds it, and marks the write as started. Pair with ``endWrite(_:)``.
    @usableFromInline
    func beginWrite(_ key: some Sendable) async -> Int {
        let stripe = Self.stripe(of: key)
        _ = await whenReady { state -> Bool? in
            guard !state.stripes[stripe].held && !state.clearing else { return nil }
            state.hold(stripe)
            state.stripes[stripe].writing = true
            state.stripes[stripe].started &+= 1
            return true
        }
        return stripe
    }

    @usableFromInline
    func endWrite(_ stripe: Int) { release(stripe) }

    /// Holds every stripe for a clear once none is held, voiding earlier tickets (``endClear()``).
    @usableFromInline
    func beginClear() async {
        _ = await whenReady { state -> Bool? in
            guard !state.clearing else { return nil }
            state.clearing = true
            state.epoch &+= 1
            return true
        }
        _ = await whenReady { state -> Bool? in state.held == 0 ? true : nil }
    }

    @usableFromInline
    func endClear() {
        defer { ended.add(1, ordering: .releasing) }
        let waiters = state.withLock { state in
            state.clearing = false
            return state.waiters.resumeAll()
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs `attempt` under the lock until it returns a result, parking between
    /// tries. Not cancellable (a landing is one write of one level): the order
    /// must hold even for a cancelled caller.
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
