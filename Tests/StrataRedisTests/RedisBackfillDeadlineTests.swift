import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// A value written into Redis with a deadline must not outlive it, however
/// long the write waited for a connection.
@Suite(.serialized) struct RedisBackfillDeadlineTests {
    /// `redis + lower`: the lower entry expires in four seconds (time for a
    /// loaded machine to get the read going), and the server is stopped
    /// until that deadline has passed. It must not store the value for the
    /// time it had left when the back-fill began:
    /// - `connected: false`: the back-fill waits for a connect (three slots:
    ///   the GET takes the first, the miss's TIME the second, the back-fill
    ///   the third, whose `SELECT` stalls);
    /// - `connected: true` (one slot, up): it is sent at once with four
    ///   seconds left, and the server runs it after the deadline. `PX` counts
    ///   from when Redis runs the command, so it stored the value for four
    ///   more seconds; the script now stores what is left of the deadline on
    ///   the server's clock (measured by the miss's `TIME`): nothing.
    @Test(arguments: [false, true])
    func aBackfillTheServerRunsAfterItsDeadlineStoresNothing(connected: Bool) async throws {
        let server = try await RedisServer()
        let prefix = connected ? "deadline-run:" : "deadline:"
        let redis = try RedisCacheLevel<String, String>(url: server.url + "/1", prefix: prefix, connections: connected ? 1 : 3,
                                                        commandTimeout: .seconds(20), invalidatesLevelsAbove: false)
        let lower = GatedLevel()
        let cache = redis + lower
        let read = Task { try await cache.getIfPresent("k") }  // Redis misses; the lower read is held
        #expect(await poll(timeout: .seconds(30)) { lower.reads.value == 1 })
        // The lower value is stored once the read is held, so a machine slow to
        // start the read (CI's parallel start) does not eat into the four seconds.
        let deadline = SystemClock().now().advanced(by: .seconds(4))
        try await lower.store.set("v", forKey: "k", expiresAt: deadline)
        kill(server.process.processIdentifier, SIGSTOP)
        lower.gate.open()
        #expect(try await read.value == "v")
        if !connected { #expect(await poll { redis.client.connectWaiters(slot: 2) == 1 }, "the back-fill waits for a connect") }
        #expect(SystemClock().now() < deadline, "too slow to test: the back-fill began after the deadline")
        #expect(await poll(timeout: .seconds(10)) { SystemClock().now() > deadline.advanced(by: .milliseconds(50)) })
        kill(server.process.processIdentifier, SIGCONT)
        await cache.waitForPendingWrites()
        let other = try RedisCacheLevel<String, String>(url: server.url + "/1", prefix: prefix, invalidatesLevelsAbove: false)
        #expect(try await other.client.send("PTTL", "\(prefix)k") == .integer(-2), "the back-fill stored the value past its deadline")
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }
}

/// A Redis level's own TTL caps a back-fill's deadline (``StoredDeadline``).
@Suite struct RedisBackfillTTLCapTests {
    @Test func aBackfillIntoRedisLivesAtMostTheLevelsOwnTTL() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "cap:", defaultTTL: .seconds(10),
                                                        invalidatesLevelsAbove: false)
        let lower = MemoryCacheLevel<String, String>(capacity: 1000)
        try await lower.set("v", forKey: "k", ttl: .seconds(300))
        let cache = redis + lower
        // (On a loaded machine a back-fill whose reply is late is taken back: read again.)
        var pttl: Int64 = -2
        _ = await poll(timeout: .seconds(20)) {
            _ = try? await cache.get("k")
            await cache.waitForPendingWrites()
            if case .integer(let left)? = try? await redis.client.send("PTTL", "cap:k") { pttl = Int64(left) }
            return pttl != -2
        }
        #expect(pttl > 0 && pttl <= 10_000, "PTTL \(pttl) ms: the lower entry's 5 minutes, not the level's 10 s")
        await redis.shutdown(); await server.kill()
    }
}
