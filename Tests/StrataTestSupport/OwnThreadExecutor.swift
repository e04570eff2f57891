import Dispatch

/// Runs the jobs of the tasks that prefer it on a serial queue of its own,
/// off the shared cooperative pool (two threads here): a test may block such
/// a task (a held synchronous read, a semaphore) without starving every other
/// test running in parallel.
public final class OwnThreadExecutor: TaskExecutor {
    private let queue: DispatchQueue
    private static let marker = DispatchSpecificKey<Bool>()

    public init(label: String = "strata.tests.own-thread") {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: Self.marker, value: true)
    }

    /// Whether the caller runs on the queue of an `OwnThreadExecutor`.
    public static var isCurrent: Bool { DispatchQueue.getSpecific(key: marker) ?? false }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
