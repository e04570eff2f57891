import DequeModule

/// The one registry of parked tasks in Strata.
///
/// Design (after swift-async-algorithms' state machines): the queue is a plain
/// value that an owner keeps inside its own lock, next to the state that
/// decides when waiters may go on (free permits, a flight's result, a count of
/// pending writes). Every mutating method only changes state and *returns* the
/// continuations to resume; the owner resumes them after it has left the lock.
///
/// A waiter's life: ``reserve()`` an id (before suspending), ``park(_:_:)`` the
/// continuation (inside `withCheckedThrowingContinuation`), then exactly one of
/// ``resumeFirst()``/``resumeAll()``/``take(_:)`` (resumed by the owner) or
/// ``cancel(_:)`` (from the task's cancellation handler). Cancellation may come
/// at any point, even before the park or after the resume: before, the park
/// reports it; after, it is a no-op that leaves nothing behind. Every id is
/// forgotten when its waiter is resumed, so nothing accumulates.
@usableFromInline
struct WaiterQueue<Output: Sendable>: Sendable {
    @usableFromInline typealias Continuation = CheckedContinuation<Output, any Error>

    enum Slot {
        /// Reserved, not parked yet.
        case reserved
        /// Cancelled before it parked.
        case cancelledEarly
        case parked(Continuation)
    }

    private var slots: [UInt64: Slot] = [:]
    /// Parked ids in arrival order; ids no longer parked are skipped lazily
    /// and dropped in bulk (see `dropStaleOrder()`).
    private var order: Deque<UInt64> = []
    private var nextID: UInt64 = 0
    /// Waiters parked right now.
    private(set) var parkedCount = 0

    @usableFromInline init() {}

    /// Ids the queue still tracks (reserved, parked or cancelled early); for tests.
    var trackedCount: Int { slots.count }

    /// Whether waiter `id` is parked right now.
    func isParked(_ id: UInt64) -> Bool {
        if case .parked = slots[id] { return true }
        return false
    }

    /// A new waiter id.
    mutating func reserve() -> UInt64 {
        nextID += 1
        slots[nextID] = .reserved
        return nextID
    }

    /// Parks `continuation` as waiter `id`. Returns `false` (and forgets the id)
    /// when the waiter was cancelled before it parked: resume it with
    /// `CancellationError`.
    mutating func park(_ id: UInt64, _ continuation: Continuation) -> Bool {
        guard case .reserved = slots[id] else {
            slots[id] = nil
            return false
        }
        slots[id] = .parked(continuation)
        order.append(id)
        parkedCount += 1
        return true
    }

    /// Forgets a reserved waiter that the owner lets through without parking.
    /// Returns `false` when it had been cancelled (resume it with `CancellationError`).
    mutating func admit(_ id: UInt64) -> Bool {
        defer { slots[id] = nil }
        if case .cancelledEarly = slots[id] { return false }
        return true
    }

    /// The task of waiter `id` was cancelled: returns its continuation to resume
    /// with `CancellationError` if it is parked; remembers the cancellation if
    /// it has not parked yet; does nothing if it was already resumed.
    mutating func cancel(_ id: UInt64) -> Continuation? {
        switch slots[id] {
        case .reserved:
            slots[id] = .cancelledEarly
            return nil
        case .parked:
            return take(id)
        case .cancelledEarly, nil:
            return nil
        }
    }

    /// Removes parked waiter `id` and returns it to resume.
    mutating func take(_ id: UInt64) -> Continuation? {
        guard case .parked(let continuation) = slots[id] else { return nil }
        slots[id] = nil
        parkedCount -= 1
        dropStaleOrder()
        return continuation
    }

    /// Waiters taken by id or cancelled stay in `order` until a
    /// ``resumeFirst()`` pops them, and some owners never call it (a pool
    /// resumes by id): forget them when nobody is parked, and compact the
    /// order once it is mostly stale, so it never outgrows the parked waiters
    /// by more than a constant factor (amortised O(1) per waiter).
    private mutating func dropStaleOrder() {
        if parkedCount == 0 {
            order.removeAll(keepingCapacity: order.count <= 64)
        } else if order.count > 2 * parkedCount + 64 {
            order = Deque(order.filter { if case .parked = slots[$0] { true } else { false } })
        }
    }

    /// The longest-parked waiter, removed.
    mutating func resumeFirst() -> Continuation? {
        while let id = order.popFirst() {
            if let continuation = take(id) { return continuation }
        }
        return nil
    }

    /// Every parked waiter, removed, oldest first.
    mutating func resumeAll() -> [Continuation] {
        var all: [Continuation] = []
        all.reserveCapacity(parkedCount)
        while let continuation = resumeFirst() { all.append(continuation) }
        order.removeAll()
        return all
    }
}

/// What an owner decides when a waiter arrives with its continuation.
@usableFromInline
enum WaiterArrival<Output: Sendable>: Sendable {
    /// The waiter is parked; someone resumes it later.
    case parked
    /// The waiter goes on at once with this result.
    case resume(WaiterQueue<Output>.Continuation, Result<Output, any Error>)
}

/// Suspends the current task as a waiter. The three closures run the owner's
/// critical sections: `reserve` takes an id (``WaiterQueue/reserve()``),
/// `arrive` decides under the lock whether the waiter parks or goes on at once
/// (calling ``WaiterQueue/park(_:_:)`` or ``WaiterQueue/admit(_:)``), and
/// `cancel` runs on cancellation (``WaiterQueue/cancel(_:)`` plus the owner's
/// own clean-up) and returns a continuation to resume with `CancellationError`.
/// Continuations are always resumed outside the owner's lock.
@usableFromInline
func suspendAsWaiter<Output: Sendable>(
    reserve: () -> UInt64,
    arrive: (UInt64, WaiterQueue<Output>.Continuation) -> WaiterArrival<Output>,
    cancel: @escaping @Sendable (UInt64) -> WaiterQueue<Output>.Continuation?
) async throws -> Output {
    let id = reserve()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: WaiterQueue<Output>.Continuation) in
            if case .resume(let waiter, let result) = arrive(id, continuation) { waiter.resume(with: result) }
        }
    } onCancel: {
        cancel(id)?.resume(throwing: CancellationError())
    }
}
