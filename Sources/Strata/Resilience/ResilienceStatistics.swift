import Synchronization

/// What a ``ResilientCache`` has done so far.
public struct ResilienceStatistics: Sendable, Equatable {
    /// Gets answered with a last known value because the levels failed or were late.
    public var staleAnswers: Int
    /// Gets answered stale at the soft timeout (their reads finished in the background).
    public var softTimeouts: Int
    /// Gets that reached the hard timeout (answered stale, or failed).
    public var hardTimeouts: Int
    /// Background refreshes started ahead of expiry.
    public var refreshesStarted: Int
    /// Refreshes whose load or write failed (logged).
    public var refreshesFailed: Int
    /// Refreshes dropped because a write or a reported change touched the key meanwhile.
    public var refreshesDropped: Int
    /// Last known values held now.
    public var knownValues: Int
}

final class ResilienceCounters: Sendable {
    let staleAnswers = Atomic<Int>(0)
    let softTimeouts = Atomic<Int>(0)
    let hardTimeouts = Atomic<Int>(0)

    func snapshot(knownValues: Int, refreshes: (started: Int, failed: Int, skipped: Int, pending: Int)) -> ResilienceStatistics {
        ResilienceStatistics(
            staleAnswers: staleAnswers.load(ordering: .relaxed), softTimeouts: softTimeouts.load(ordering: .relaxed),
            hardTimeouts: hardTimeouts.load(ordering: .relaxed), refreshesStarted: refreshes.started,
            refreshesFailed: refreshes.failed, refreshesDropped: refreshes.skipped, knownValues: knownValues)
    }
}
