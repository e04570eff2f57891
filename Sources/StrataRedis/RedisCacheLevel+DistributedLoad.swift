import Foundation
import Strata

/// Single flight across processes: one load per key for every process on
/// the prefix, not one per process.
///
/// A loader wrapped with ``distributedLoad(ttl:timeout:_:)`` first takes a
/// short lock in Redis (`SET strata-lock:<key> <token> NX PX <timeout>`). The
/// process that gets it loads, writes the value into Redis as a back-fill
/// (`SET NX` behind the tombstones: never over a newer value, never over a
/// remove made after the load began), then releases the lock (deleted only
/// if it still holds its token: a script). The others wait for the value to
/// appear in Redis (polling with a backoff of 2 to 50 ms) and answer it; if
/// the lock goes without a value (its loader failed) one of them takes it;
/// past `timeout` they load for themselves. Redis unreachable: the loader
/// runs alone, as without the lock. The lock lives outside the prefix, so no
/// level's invalidations report it.
extension RedisCacheLevel {
    /// `load`, called at most once at a time per key across the processes
    /// sharing this level's prefix (see above). Use it as the loader of a
    /// stack over this level: `stack.get(key, ttl: ttl, load: redis.distributedLoad(ttl: ttl) { … })`.
    public func distributedLoad(ttl: Duration?, timeout: Duration = .seconds(5),
                                _ load: @escaping @Sendable (Key) async throws -> Value) -> @Sendable (Key) async throws -> Value {
        { [self] key in try await loadOnce(key, ttl: ttl, timeout: timeout, load) }
    }

    private func loadOnce(_ key: Key, ttl: Duration?, timeout: Duration,
                          _ load: @Sendable (Key) async throws -> Value) async throws -> Value {
        let lock = Array("strata-lock:".utf8) + redisKey(key)
        let token = Array(UUID().uuidString.utf8)
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.milliseconds(2)
        while ContinuousClock.now < deadline {
            let milliseconds = Array(String(max(1, (deadline - ContinuousClock.now).nanoseconds / 1_000_000)).utf8)
            let taken: Bool
            do {
                taken = try await client.send([RedisCommandName.set, lock, token, RedisCommandName.nx,
                                               RedisCommandName.px, milliseconds]) == .simpleString("OK")
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                return try await load(key)  // Redis unreachable: as without the lock
            }
            if taken {
                // Released once the value is in Redis (or the load failed),
                // even for a cancelled caller (a detached task: a cancelled
                // one sends nothing): the next to take it finds the value, or loads.
                let startedAt = ContinuousClock.now
                let answer: Result<Value, any Error>
                do { answer = .success(try await loadHoldingLock(key, ttl: ttl, load)) } catch { answer = .failure(error) }
                await Task.detached { [self] in
                    if case .success(let value) = answer { await backfillLoaded(value, forKey: key, ttl: ttl, loadStartedAt: startedAt) }
                    await unlock(lock, token)
                }.value
                return try answer.get()
            }
            // Another process loads: its value appears here, or its lock goes.
            if let value = try? await getIfPresent(key) { return value }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(50))
        }
        return try await load(key)
    }

    /// The value another process put in Redis just before this one took
    /// the lock, or `load`'s.
    private func loadHoldingLock(_ key: Key, ttl: Duration?, _ load: @Sendable (Key) async throws -> Value) async throws -> Value {
        if let value = try? await getIfPresent(key) { return value }
        return try await load(key)
    }

    /// Writes a loaded value into Redis as a back-fill: never over a newer
    /// value (a value already there declines it), nor over a remove made
    /// after the load began (its tombstone declines it).
    private func backfillLoaded(_ value: Value, forKey key: Key, ttl: Duration?, loadStartedAt: ContinuousClock.Instant) async {
        let expiresAt = ttl.map { SystemClock().now().advanced(by: $0) }
        try? await backfill(Backfill(value: value, expiresAt: expiresAt, readStartedAt: loadStartedAt), forKey: key)
    }

    private func unlock(_ lock: [UInt8], _ token: [UInt8]) async {
        _ = try? await client.send([RedisCommandName.eval, Array(Self.unlockScript.utf8), Array("1".utf8), lock, token])
    }

    /// Deletes `KEYS[1]` if it still holds `ARGV[1]` (the lock's token).
    static var unlockScript: String {
        """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
        return 0
        """
    }
}
