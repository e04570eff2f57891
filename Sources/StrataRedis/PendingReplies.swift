import NIOCore
import Synchronization

/// Where the replies to one send go: `count` replies, which arrive in order,
/// handed over together once the last is in; or the first failure (a
/// timeout, a closed connection, a cancelled caller), whichever comes first.
/// It completes exactly once, and replies that arrive after are dropped.
final class PendingReplies: Sendable {
    typealias Callback = @Sendable (Result<[RESPValue], any Error>) -> Void

    private enum Waiter {
        /// Unchecked: this type resumes it exactly once (its state machine),
        /// and the checked kind's bookkeeping costs an allocation per request.
        case continuation(UnsafeContinuation<[RESPValue], any Error>)
        case callback(Callback)

        func resume(with result: Result<[RESPValue], any Error>) {
            switch self {
            case .continuation(let continuation): continuation.resume(with: result)
            case .callback(let callback): callback(result)
            }
        }
    }

    private struct State {
        var replies: [RESPValue] = []
        var waiter: Waiter?
        /// Set once complete; kept for a waiter that comes later.
        var result: Result<[RESPValue], any Error>?
    }

    let count: Int
    private let state: Mutex<State>

    init(count: Int) {
        self.count = count
        var state = State()
        state.replies.reserveCapacity(count)
        self.state = Mutex(state)
    }

    /// Replies to be handed to `callback` (tests, and callers that are not async).
    convenience init(count: Int, callback: @escaping Callback) {
        self.init(count: count)
        wait(.callback(callback))
    }

    /// Resumes `continuation` with the replies (at once if already complete).
    func wait(for continuation: UnsafeContinuation<[RESPValue], any Error>) { wait(.continuation(continuation)) }

    private func wait(_ waiter: Waiter) {
        let result = state.withLock { state -> Result<[RESPValue], any Error>? in
            if state.result == nil { state.waiter = waiter }
            return state.result
        }
        if let result { waiter.resume(with: result) }
    }

    var isComplete: Bool { state.withLock { $0.result != nil } }

    /// The next reply, in order.
    func deliver(_ value: RESPValue) {
        let done = state.withLock { state -> (Waiter?, Result<[RESPValue], any Error>)? in
            guard state.result == nil else { return nil }
            state.replies.append(value)
            guard state.replies.count == count else { return nil }
            return Self.complete(&state, .success(state.replies))
        }
        if let (waiter, result) = done { waiter?.resume(with: result) }
    }

    func fail(_ error: any Error) {
        let done = state.withLock { state -> (Waiter?, Result<[RESPValue], any Error>)? in
            guard state.result == nil else { return nil }
            return Self.complete(&state, .failure(error))
        }
        if let (waiter, result) = done { waiter?.resume(with: result) }
    }

    private static func complete(_ state: inout State, _ result: Result<[RESPValue], any Error>)
        -> (Waiter?, Result<[RESPValue], any Error>) {
        defer {
            state.waiter = nil
            state.replies = []
        }
        state.result = result
        return (state.waiter, result)
    }
}
