import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// Review of #33: `.contactLost` forgets nothing, and coming back publishes
/// `.all` only if the level was used while unsubscribed, so a value another
/// client replaced while the tracking connection was down stays the fallback.
@Suite(.serialized) struct RedisFailSafeReviewTests {
    @Test func aValueReplacedWhileContactWasLostIsNotAnsweredStaleAfterComingBack() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "fsr:", codec: .string,
                                                        commandTimeout: .seconds(2))
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = (memory + redis).failSafe(maxStale: .seconds(600))
        let db = RedisFailSafeTests.Database()
        #expect(await poll { redis.isReceivingInvalidations })
        #expect(try await cache.get("k", ttl: .seconds(60), load: db.load) == "row k")
        #expect(await RedisFailSafeTests.loadAndSettle(cache, redis, server, prefix: "fsr:", key: "k", load: db.load))
        #expect(cache.resilienceStatistics.knownValues == 1)

        // The tracking connection drops; another client replaces the key before it is back.
        let id = try #require(try await clientList(redis.client).first { $0.contains("name=\(RedisInvalidationSubscriber.clientName) ") }?
            .split(separator: " ").first { $0.hasPrefix("id=") }.map { String($0.dropFirst(3)) })
        _ = try await redis.client.send("CLIENT", "KILL", "ID", id)
        _ = try await redis.client.send("SET", "fsr:k", "another client's")
        #expect(await poll(timeout: .seconds(10)) { redis.invalidationSubscriptions == 2 && redis.isReceivingInvalidations })
        #expect(await poll { !memory.contains("k") })
        // docs/consistency.md, README: "coming back (`.all`) forgets everything from before".
        #expect(await poll(timeout: .seconds(2)) { cache.resilienceStatistics.knownValues == 0 },
                "back in contact, yet \(cache.resilienceStatistics.knownValues) value from before is still vouched for")

        await server.kill()
        db.down.store(true, ordering: .relaxed)
        let answer = try? await cache.get("k", ttl: .seconds(60), load: db.load)
        #expect(answer != "row k", "answered a value another client replaced (Redis held \"another client's\")")
        await redis.shutdown()
    }
}
