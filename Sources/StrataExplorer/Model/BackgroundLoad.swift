import Synchronization

/// The task and the gate of a background load, a ``Workload`` or a
/// ``TraceReplay``: started once, stopped, awaited, and held back while
/// counters are reset.
final class BackgroundLoad: Sendable {
    /// Lets the load's requests through, or holds them back (``quiesce(timeout:_:)``).
    let gate = WorkloadGate()
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Runs `body` on a task of its own.
    func start(_ body: @escaping @Sendable () async -> Void) {
        let handle = Task { await body() }
        task.withLock { $0 = handle }
    }

    /// Cancels the task and lets every request held at the gate go (they send nothing).
    func stop() {
        task.withLock { $0 }?.cancel()
        gate.close()
    }

    /// Waits until the task has ended (stopped or finished).
    func finished() async { await task.withLock { $0 }?.value }

    /// Holds new requests back, waits (at most `timeout`) for those in flight, runs `body`, and lets them go on.
    func quiesce(timeout: Duration, _ body: () -> Void) async {
        await gate.quiesce(timeout: timeout, body)
    }
}
