import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// A process's own writes through a Redis level: Redis does not report them
/// back (`NOLOOP` on the tracking connection, which carries the writes), so
/// the composition that wrote keeps its value; the level reports them to the
/// other compositions over it in the process itself.
@Suite(.serialized) struct OwnWriteReportTests {
    /// Waits until Redis has reported a change `redis-cli` makes now. Redis
    /// reports changes in the order it makes them, so any report of a write
    /// made before has been handled by then.
    func fence(_ server: RedisServer, _ redis: RedisCacheLevel<String, String>, prefix: String) async throws {
        let received = redis.invalidationsReceived
        _ = try await redisCLI(server, "SET", prefix + "fence", "x")
        #expect(await poll { redis.invalidationsReceived > received }, "the fence's invalidation")
    }

    @Test func ownSetRemoveAndClearAreNotReportedBack() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "own1:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await cache.set("v1", forKey: "k")
        try await cache.set("gone", forKey: "r")
        try await cache.remove("r")
        try await fence(server, redis, prefix: "own1:")
        #expect(redis.invalidationsReceived == 1, "only the fence: \(redis.invalidationsReceived)")
        #expect(try await memory.getIfPresent("k") == "v1", "the writer keeps what it wrote")
        #expect(cache.invalidationsApplied == 1)

        await cache.clear()
        try await cache.set("v2", forKey: "k")
        try await fence(server, redis, prefix: "own1:")
        #expect(redis.invalidationsReceived == 2, "only the fences")
        #expect(redis.nearCacheFlushes == 0, "its own clear is not a flush")
        #expect(try await memory.getIfPresent("k") == "v2")
        await redis.shutdown(); await server.kill()
    }

    /// A back-fill into Redis runs as a script, whose writes `NOLOOP` does
    /// not cover (Redis 7.0): Redis reports it back. The level recognises it
    /// (the key still holds what it wrote) and the levels above keep the key.
    @Test func aBackfillIntoRedisIsNotReportedBackAsAnotherClientsWrite() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "own5:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let origin = BasicFetcher<String, String> { "origin \($0)" }
        let cache = memory + redis + origin
        #expect(await poll { redis.isReceivingInvalidations })
        #expect(try await cache.get("k") == "origin k")
        #expect(try await cache.get("j") == "origin j")
        await cache.waitForPendingWrites()
        #expect(try await redis.getIfPresent("k") == "origin k", "back-filled into Redis")
        try await fence(server, redis, prefix: "own5:")
        #expect(redis.invalidationsReceived == 1, "only the fence: \(redis.invalidationsReceived)")
        #expect(memory.contains("k") && memory.contains("j"), "memory dropped its own back-fill")
        // Another client's write of a back-filled key is still heard.
        _ = try await redisCLI(server, "SET", "own5:k", "theirs")
        #expect(await poll { !memory.contains("k") })
        #expect(try await cache.get("k") == "theirs")
        await redis.shutdown(); await server.kill()
    }

    /// Concurrent back-fills of one key: one lands, the others are declined
    /// (`SET NX`); a declined one must not take the record of the one that
    /// landed, whose report then still comes.
    @Test func aDeclinedBackfillDoesNotHideTheReportOfTheOneThatLanded() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "own6:")
        let subscription = redis.subscribe { _ in }
        #expect(await poll { redis.isReceivingInvalidations })
        let keys = (0..<50).map { "k\($0)" }
        await withTaskGroup(of: Void.self) { group in
            for key in keys {
                for _ in 0..<3 {
                    group.addTask {
                        let fill = Backfill(value: "v", expiresAt: nil, readStartedAt: .now)
                        try? await redis.backfill(fill, forKey: key)
                    }
                }
            }
        }
        try await fence(server, redis, prefix: "own6:")
        #expect(redis.invalidationsReceived == 1, "own back-fills reported back: \(redis.invalidationsReceived - 1)")
        subscription.cancel()
        await redis.shutdown(); await server.kill()
    }

    @Test func otherCompositionsOverTheLevelHearOfTheWrite() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "own2:")
        let memoryA = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let memoryB = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cacheA = memoryA + redis, cacheB = memoryB + redis
        #expect(await poll { redis.isReceivingInvalidations })
        // Each write through A is reported to B once, right after it. (The
        // count goes up as B starts applying one: what it drops is polled.)
        func reported(_ count: Int) async -> Bool { await poll { cacheB.invalidationsApplied == count } }
        try await cacheA.set("v1", forKey: "k")
        #expect(await reported(1))
        // B reads it and keeps it (once B has finished applying the report,
        // which drops a back-fill made meanwhile).
        func readIntoB(_ value: String) async throws -> Bool {
            try await poll {
                guard try await cacheB.get("k") == value else { return false }
                await cacheB.waitForPendingWrites()
                return try await memoryB.getIfPresent("k") == value
            }
        }
        #expect(try await readIntoB("v1"))

        try await cacheA.set("v2", forKey: "k")
        #expect(await reported(2))
        #expect(try await poll { try await memoryB.getIfPresent("k") == nil }, "B dropped the key A wrote")
        #expect(try await memoryA.getIfPresent("k") == "v2", "A kept it")
        #expect(cacheA.invalidationsApplied == 0, "A skipped the reports of its own writes")
        #expect(try await readIntoB("v2"))

        try await cacheA.remove("k")
        #expect(await reported(3))
        #expect(try await poll { try await memoryB.getIfPresent("k") == nil }, "and a remove")
        try await cacheB.set("b", forKey: "x")
        #expect(await poll { cacheA.invalidationsApplied == 1 }, "B's write reported to A")
        await cacheA.clear()
        #expect(await reported(4))
        #expect(try await poll { try await memoryB.getIfPresent("x") == nil }, "and a clear")

        // A write to the level itself (no composition) reaches both.
        try await cacheA.set("a", forKey: "y")
        #expect(await reported(5))
        try await redis.set("direct", forKey: "y")
        #expect(try await poll { try await memoryA.getIfPresent("y") == nil }, "a direct write drops A's copy")
        #expect(redis.invalidationsReceived == 0, "Redis reported none of these")
        await redis.shutdown(); await server.kill()
    }

    /// Nested compositions: the outer one's write passes through the inner
    /// one; neither drops what it wrote.
    @Test func nestedCompositionsKeepTheirOwnWrite() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "own3:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let middle = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + (middle + redis)
        #expect(await poll { redis.isReceivingInvalidations })
        try await cache.set("v", forKey: "k")
        try await fence(server, redis, prefix: "own3:")
        #expect(try await memory.getIfPresent("k") == "v")
        #expect(try await middle.getIfPresent("k") == "v")
        await redis.shutdown(); await server.kill()
    }
}
