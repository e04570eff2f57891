/// One value from ``ComposedCache/values(forKey:)``.
public struct CacheReading<Value: Sendable>: Sendable {
    /// Which levels a reading came from.
    public enum Source: Sendable, Equatable {
        /// From the upper (caching) levels, possibly stale.
        case cached
        /// From the lower levels (the origin), just fetched.
        case fresh
    }

    /// The value read.
    public let value: Value
    /// Where ``value`` came from: the caching levels or the origin.
    public let source: Source

    /// A reading of `value` from `source`.
    public init(value: Value, source: Source) {
        self.value = value
        self.source = source
    }
}

extension CacheReading: Equatable where Value: Equatable {}

extension ComposedCache {
    /// Stale-then-fresh (Droste's `forwardRequest()`), as a stream.
    ///
    /// Ordering guarantee: if the upper levels hold the key, that value is
    /// yielded first (`.cached`); then the lower levels are always asked and
    /// their value is yielded (`.fresh`) and written back into the upper
    /// levels (with its expiry, and only if no write to the key got in first,
    /// as for a get); then the stream finishes. At most two readings, cached first.
    /// A reading is never older than one yielded before it: when a write to
    /// the key through this composition (or a change reported by a shared
    /// store) overlapped the two reads, the lower one may predate the cached
    /// one, and the stream ends with the cached reading alone.
    ///
    /// Failures: if the refresh fails after a cached reading, the stream ends
    /// with that error (the caller already holds the stale value). It ends
    /// with a ``FetchError`` naming this composition and the key, as a get
    /// throws: ``FetchError/Reason/valueNotInCache`` if neither part has the
    /// key, ``FetchError/Reason/levelsFailed`` if the lower levels fail; an
    /// upper level that fails is treated as a miss. Cancelling the consuming task
    /// (or dropping the stream) cancels the refresh.
    public func values(forKey key: Key) -> AsyncThrowingStream<CacheReading<Value>, any Error> {
        let upper = self.upper
        return AsyncThrowingStream { continuation in
            let task = Task {
                var hadCached = false
                // Taken before the upper read, so a write that overlaps either read is seen.
                let ticket = self.order.beginRead(key)
                if let cached = try? await upper.getIfPresent(key) {
                    hadCached = true
                    continuation.yield(CacheReading(value: cached, source: .cached))
                }
                do {
                    // Read and back-filled as a get's miss path does: judged from a ticket
                    // taken after the upper read (where a shared level may have recorded
                    // what its miss left, such as a Redis lease), and by the pooled read
                    // it may join.
                    if let fresh = try await self.readLower(key, failures: []) {
                        // A write overlapped the readings: the lower one may be older than the
                        // cached one already yielded (a set that reached `upper` first), so it is not yielded.
                        if !hadCached || self.order.isCurrent(ticket) {
                            continuation.yield(CacheReading(value: fresh.value, source: .fresh))
                        }
                        continuation.finish()
                    } else {
                        continuation.finish(throwing: hadCached ? nil : FetchError.notFound(key, in: self.name))
                    }
                } catch {
                    continuation.finish(throwing: FetchError.failed(error, key: key, in: self.name))
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
