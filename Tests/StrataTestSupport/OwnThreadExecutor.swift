import Dispatch

/// Runs the jobs of the tasks that prefer it on a serial queue of its own,
/// off the shared cooperative pool (two threads here): a test may block such
/// a task (a held synchronous read, a semaphore) without starving every other
/// test running in parallel.
public final class OwnThreadExecutor: TaskExecutor {
    private let queue: DispatchQueue

    public init(label: String = "strata.tests.own-thread") { queue = DispatchQueue(label: label) }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
