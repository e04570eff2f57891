import Synchronization

/// How a wait for a task with a time limit ended.
enum TimedWait<Success: Sendable>: Sendable {
    case finished(Result<Success, any Error>)
    /// The limit passed first; the task runs on.
    case timedOut
    /// The waiting task was cancelled; the task runs on.
    case cancelled
}

/// Waits for `task` for at most `limit` (`nil`: no limit), without cancelling
/// it: a caller that stops waiting leaves it to finish in the background.
func wait<Success: Sendable>(for task: Task<Success, any Error>, atMost limit: Duration?) async -> TimedWait<Success> {
    let arrival = FirstArrival<Success>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation { continuation in
            arrival.install(continuation)
            Task { arrival.resume(with: .finished(await task.result)) }
            if let limit {
                arrival.timer(Task {
                    do { try await Task.sleep(for: limit) } catch { return }
                    arrival.resume(with: .timedOut)
                })
            }
        }
    } onCancel: {
        arrival.resume(with: .cancelled)
    }
}

/// One continuation, resumed by whichever arrives first; the timer is
/// cancelled then. Arrivals before the continuation is installed are kept.
private final class FirstArrival<Success: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<TimedWait<Success>, Never>?
        var early: TimedWait<Success>?
        var done = false
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    func install(_ continuation: CheckedContinuation<TimedWait<Success>, Never>) {
        let early = state.withLock { state -> TimedWait<Success>? in
            if let early = state.early {
                state.done = true
                return early
            }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func timer(_ task: Task<Void, Never>) {
        let cancel = state.withLock { state -> Bool in
            if state.done || state.early != nil { return true }
            state.timer = task
            return false
        }
        if cancel { task.cancel() }
    }

    func resume(with arrival: TimedWait<Success>) {
        let (continuation, timer) = state.withLock { state -> (CheckedContinuation<TimedWait<Success>, Never>?, Task<Void, Never>?) in
            guard !state.done else { return (nil, nil) }
            guard let continuation = state.continuation else {
                if state.early == nil { state.early = arrival }
                return (nil, nil)
            }
            state.done = true
            state.continuation = nil
            defer { state.timer = nil }
            return (continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(returning: arrival)
    }
}
