import DequeModule
import Synchronization

/// A counting semaphore for tasks: waiters are served first come, first
/// served, and a cancelled waiter leaves the queue with `CancellationError`.
public final class AsyncSemaphore: Sendable {
    struct State {
        var available: Int
        var queue: Deque<(id: UInt64, continuation: CheckedContinuation<Void, any Error>)> = []
        var nextID: UInt64 = 0
        var cancelledEarly: Set<UInt64> = []
    }

    private let state: Mutex<State>
    /// The number of permits.
    public let limit: Int

    public init(limit: Int) {
        precondition(limit > 0, "AsyncSemaphore needs at least one permit")
        self.limit = limit
        self.state = Mutex(State(available: limit))
    }

    /// Takes a permit, waiting in line if none is free.
    public func acquire() async throws {
        let ticket = state.withLock { state -> UInt64? in
            if state.available > 0 && state.queue.isEmpty {
                state.available -= 1
                return nil
            }
            state.nextID += 1
            return state.nextID
        }
        guard let ticket else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case cancelled, acquired, queued }
                let outcome = state.withLock { state -> Outcome in
                    if state.cancelledEarly.remove(ticket) != nil { return .cancelled }
                    // A permit may have been released between the fast path and here.
                    if state.available > 0 && state.queue.isEmpty {
                        state.available -= 1
                        return .acquired
                    }
                    state.queue.append((ticket, continuation))
                    return .queued
                }
                switch outcome {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .acquired: continuation.resume()
                case .queued: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if let index = state.queue.firstIndex(where: { $0.id == ticket }) {
                    return state.queue.remove(at: index).continuation
                }
                state.cancelledEarly.insert(ticket)
                return nil
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Returns a permit, handing it to the longest waiter if there is one.
    public func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            if let first = state.queue.popFirst() { return first.continuation }
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
    public var waiting: Int { state.withLock { $0.queue.count } }
}
