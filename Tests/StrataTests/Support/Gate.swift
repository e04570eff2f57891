import Synchronization

/// A one-shot latch: `wait()` suspends until `open()`; cancellable.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var next: UInt64 = 0
        var cancelledEarly: Set<UInt64> = []
    }

    private let state = Mutex(State())

    var waiting: Int { state.withLock { $0.waiters.count } }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.isOpen = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async throws {
        let id = state.withLock { state -> UInt64 in state.next += 1; return state.next }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case open, cancelled, waiting }
                let outcome = state.withLock { state -> Outcome in
                    if state.isOpen { return .open }
                    if state.cancelledEarly.remove(id) != nil { return .cancelled }
                    state.waiters[id] = continuation
                    return .waiting
                }
                switch outcome {
                case .open: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .waiting: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                state.cancelledEarly.insert(id)
                return nil
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

/// Yields until `condition` holds, at most `attempts` times (no timed sleeps).
func yieldUntil(attempts: Int = 200_000, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<attempts {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}

extension Result where Failure == any Error {
    /// Captures an async throwing body's outcome.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
