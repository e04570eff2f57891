import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// The Redis level's invalidation loop starts with none of the registering
/// task's task-locals: a request that built the composition must not go on
/// receiving, in its trace, the events of every later invalidation.
@Suite(.serialized) struct RedisReportLoopContextTests {
    @Test func reportsDoNotReachTheTraceOfTheRequestThatRegistered() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "loop:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        try await redis.set("old", forKey: "k")
        let trace = RequestTrace()
        let cache = try await trace.record {
            let cache = memory.instrumented(name: "L1") + redis
            _ = try await cache.getIfPresent("k")
            return cache
        }
        #expect(await poll { redis.isReceivingInvalidations })
        await cache.waitForPendingWrites()
        // The back-fill's own echo (a script's write is reported back) may
        // drop the key once; then the value is read again, outside the trace.
        #expect(try await poll {
            _ = try await cache.getIfPresent("k")
            await cache.waitForPendingWrites()
            return try await memory.getIfPresent("k") == "old"
        })
        let during = trace.events.count
        let applied = cache.invalidationsApplied

        #expect(try await redisCLI(server, "SET", "loop:k", "new").contains("OK"))
        #expect(await poll { cache.invalidationsApplied > applied })
        #expect(try await memory.getIfPresent("k") == nil)
        #expect(trace.events.count == during,
                "the finished request's trace received \(trace.events.dropFirst(during).map(\.description))")
        await redis.shutdown(); await server.kill()
    }
}
