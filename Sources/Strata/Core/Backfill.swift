/// A back-fill: the entry a stack read from a level below, written into a
/// level above it to fill a miss there (``CacheLevel/backfill(_:forKey:)``).
///
/// It replaces nothing: a level that holds a value for the key now got it
/// since the read missed, so that value is newer. It keeps the lower entry's
/// deadline (never a fresh TTL), capped at the receiving level's own TTL.
public struct Backfill<Value: Sendable>: Sendable {
    /// The value the lower level returned.
    public var value: Value
    /// The lower entry's deadline (`nil`: none).
    public var expiresAt: CacheInstant?
    /// When the read whose answer this carries began, on this process's
    /// monotonic clock (`nil` when unknown). A shared store compares it with
    /// the removes it has seen (Redis's tombstones): a read that began
    /// before a remove may carry what the remove ended.
    public var readStartedAt: ContinuousClock.Instant?

    /// A back-fill of `value` with the lower entry's deadline, read from a read
    /// begun at `readStartedAt` (`nil`: unknown).
    public init(value: Value, expiresAt: CacheInstant?, readStartedAt: ContinuousClock.Instant? = nil) {
        self.value = value
        self.expiresAt = expiresAt
        self.readStartedAt = readStartedAt
    }

    /// How long ago the read began (`nil` when unknown).
    public var readAge: Duration? { readStartedAt.map { ContinuousClock.now - $0 } }

    /// The same back-fill carrying `value` instead (a transformed level's).
    public func with<Other: Sendable>(value: Other) -> Backfill<Other> {
        Backfill<Other>(value: value, expiresAt: expiresAt, readStartedAt: readStartedAt)
    }
}
