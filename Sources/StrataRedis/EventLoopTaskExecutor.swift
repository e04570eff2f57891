import NIOCore

/// Runs tasks on the event loops that serve a ``RedisClient``'s connections,
/// so a reply resumes the task that awaits it on the thread that read it.
///
/// Why: a task on Swift's global executor awaits a reply that an event loop
/// reads; resuming it is a hand-off to another thread (an enqueue, often a
/// wake-up), and with many requests in flight those hand-offs are most of a
/// request's cost (`strata-bench --only redis`: about half the CPU time per
/// request). A task that prefers this executor is resumed on the loop that
/// read its reply, which runs it after the read, with no thread switch.
///
/// Use it with `withTaskExecutorPreference(_:operation:)` or
/// `Task(executorPreference:)`, around the code that reads through Redis:
///
/// ```swift
/// try await withTaskExecutorPreference(redis.taskExecutor) {
///     _ = try await cache.get("user:7")
/// }
/// ```
///
/// - **Stays where the reply came from.** A job is enqueued on the group's
///   `any()` loop, which for NIO's `MultiThreadedEventLoopGroup` is the
///   current thread's loop when there is one, so a task follows the
///   connection that answered it. From any other thread, a loop is picked.
/// - **Code under the preference runs on an event loop**, including
///   `@concurrent` closures (fetchers) it calls: anything that blocks there
///   (a blocking driver, a long computation) delays every connection on that
///   loop. Keep blocking work off it (run it in a task without the preference).
/// - **Child tasks inherit the preference** (`async let`, task groups);
///   unstructured `Task {}` does not, so a composition's background
///   back-fills run on the global executor.
/// - **The loops must outlive the tasks.** With the default group
///   (`MultiThreadedEventLoopGroup.singleton`) they always do. NIO drops a
///   job given to a loop that has shut down (it logs an error, and a future
///   NIO will crash), so a task that prefers a group being shut down, the
///   one calling `shutdownGracefully()` included, is never resumed.
public final class EventLoopTaskExecutor: TaskExecutor {
    /// The loops jobs run on.
    public let group: any EventLoopGroup

    /// An executor running jobs on `group`'s loops, which must outlive the tasks.
    public init(group: any EventLoopGroup) {
        self.group = group
    }

    /// Runs `job` on one of the group's loops (whichever `any()` picks).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        group.any().execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
