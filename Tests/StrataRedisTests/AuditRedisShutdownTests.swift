import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Audit (rule 1/2): cancellation and shutdown sequences through Redis.
@Suite struct AuditRedisShutdownTests {
    /// `memory + redis`, set "new" from a task already cancelled. The memory
    /// half stores "new"; the Redis half throws `CancellationError` before
    /// sending (`RedisCacheLevel.sendWrite` checks cancellation), and the
    /// composition's clean-up remove of Redis's old value is cancelled the
    /// same way. Memory says "new", Redis (every other process, and this one
    /// once memory lets the key go) says "old".
    @Test func cancelledSetLeavesMemoryAndRedisDisagreeing() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "auditcancel:", codec: .string)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await cache.set("old", forKey: "k")

        let writer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await cache.set("new", forKey: "k")
        }
        await #expect(throws: CancellationError.self) { try await writer.value }

        let above = memory.value(forKey: "k")
        let below = try await redis.getIfPresent("k")
        #expect(above == below, "memory holds \(String(describing: above)), Redis \(String(describing: below))")
        await cache.onMemoryWarning()
        let later = try await cache.getIfPresent("k")
        #expect(!(above == "new" && later == "old"), "answered \"new\", then the overwritten \"old\"")
        await redis.shutdown(); await server.kill()
    }
}

extension AuditRedisShutdownTests {
    /// A level dropped without `shutdown()`: its deinit stops the tracking
    /// connection (`subscriber?.stopSoon()`) but not its client, whose pooled
    /// data connections stay open for the life of the process (NIO's event
    /// loop keeps a registered channel alive). Every level created and
    /// dropped leaks its sockets.
    @Test func aDroppedLevelClosesItsConnections() async throws {
        let server = try await RedisServer()
        do {
            let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "auditdrop:", codec: .string)
            let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
            let cache = memory + level
            #expect(await poll { level.isReceivingInvalidations })
            try await cache.set("v", forKey: "k")
            _ = try await level.getIfPresent("k")
            #expect(socketsTo(server.port) > 0)
        }
        // Known, not fixed yet: `shutdown()` closes them; a level dropped
        // without it leaves its client's pooled connections open.
        let closed = await poll(timeout: .seconds(2)) { socketsTo(server.port) == 0 }
        withKnownIssue("a level dropped without shutdown() leaves its pooled connections open") {
            #expect(closed, "\(socketsTo(server.port)) sockets left open by a dropped level")
        }
        await server.kill()
    }
}

extension AuditRedisShutdownTests {
    /// `clear()` does not throw, so once it returns the level is empty. Called
    /// from a cancelled task (a request handler whose client went away, a
    /// shutdown path in a cancelled task), the Redis level's `clear()` is
    /// `try? await clearPrefix()`: the tombstone write and the `SCAN` both
    /// fail with `CancellationError`, which is swallowed, and nothing is
    /// deleted. Through `memory + redis`, memory is emptied, and the next get
    /// answers the cleared value from Redis (and back-fills it).
    @Test func clearFromACancelledTaskReturnsWithoutClearingRedis() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "auditclear:", codec: .string)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await cache.set("cleared", forKey: "k")

        let clearing = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await cache.clear()  // returns normally
        }
        await clearing.value

        let after = try await cache.getIfPresent("k")
        #expect(after == nil, "a get after clear() returned answered \(String(describing: after))")
        await redis.shutdown(); await server.kill()
    }
}
