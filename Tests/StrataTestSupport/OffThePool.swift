/// Runs `body` with its task's jobs on an ``OwnThreadExecutor``, off the
/// cooperative pool: for a test that computes for seconds without
/// suspending (a fuzz loop, a check against a slow reference model), which
/// on the pool would hold one of its two threads as long, and with another
/// such test both, stalling every other test of the process.
///
/// `body` is `@concurrent`: a `nonisolated(nonsending)` closure (this
/// package's default) would stay on the caller's pool thread until it first
/// suspends, which a synchronous loop never does.
public func offThePool<T, Failure: Error>(_ body: @concurrent () async throws(Failure) -> T) async throws(Failure) -> T {
    try await withTaskExecutorPreference(OwnThreadExecutor(), operation: body)
}
