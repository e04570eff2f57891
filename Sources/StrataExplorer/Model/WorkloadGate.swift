import Synchronization

/// Lets a workload's gets through, or holds new ones back while counters are
/// reset, so no get straddles a reset (counted as a get before it and as a hit
/// after it: issue 10, D9).
final class WorkloadGate: Sendable {
    struct State {
        var held = false
        var closed = false
        var inFlight = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Waits while the gate is held; `true` with the get counted in flight,
    /// `false` once the gate is closed (the workload stopped).
    func enter() async -> Bool {
        while true {
            let admitted = state.withLock { state -> Bool? in
                if state.closed { return false }
                guard !state.held else { return nil }
                state.inFlight += 1
                return true
            }
            if let admitted { return admitted }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.closed || !state.held { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// A get let in by ``enter()`` has finished.
    func leave() { state.withLock { $0.inFlight -= 1 } }

    var inFlight: Int { state.withLock { $0.inFlight } }

    func hold() { state.withLock { $0.held = true } }

    /// Holds new gets back, waits (at most `timeout`) for those in flight,
    /// runs `body`, and lets them go on.
    func quiesce(timeout: Duration, _ body: () -> Void) async {
        hold()
        let deadline = ContinuousClock.now + timeout
        while inFlight > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        body()
        release()
    }

    func release() { open(closing: false) }

    /// Lets every waiter go for good.
    func close() { open(closing: true) }

    private func open(closing: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.held = false
            if closing { state.closed = true }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
