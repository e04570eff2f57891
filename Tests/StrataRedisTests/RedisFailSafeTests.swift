import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// Fail-safe over a real Redis (`(memory + redis).failSafe(...)` with a
/// loader): while Redis and the database are both down the last known value
/// is answered; a value another client removed never is; after Redis comes
/// back, nothing from before is vouched for.
@Suite(.serialized) struct RedisFailSafeTests {
    final class Database: Sendable {
        let down = Atomic<Bool>(false)
        let loads = Atomic<Int>(0)
        struct Down: Error {}
        func load(_ key: String) async throws -> String {
            loads.add(1, ordering: .relaxed)
            if down.load(ordering: .relaxed) { throw Down() }
            return "row \(key)"
        }
    }

    /// Loads `key` through `cache` until Redis holds it and the fail-safe
    /// knows it once Redis has reported the load's own write (a fence: a
    /// change `redis-cli` makes after it). On a loaded machine a back-fill
    /// whose reply comes later than 250 ms is taken back (see the Redis
    /// guide), and then the key is loaded again.
    static func loadAndSettle(_ cache: ResilientCache<ComposedCache<MemoryCacheLevel<String, String>, RedisCacheLevel<String, String>>>,
                              _ redis: RedisCacheLevel<String, String>,
                              _ server: RedisServer, prefix: String, key: String,
                              load: @escaping @Sendable (String) async throws -> String) async -> Bool {
        await poll(timeout: .seconds(20)) {
            _ = try? await cache.get(key, ttl: .seconds(60), load: load)
            await cache.waitForPendingWrites()
            let fenced = redis.invalidationsReceived
            _ = try? await redisCLI(server, "SET", prefix + "fence", "x")
            guard await poll(timeout: .seconds(5), { redis.invalidationsReceived > fenced }) else { return false }
            let held = (try? await redis.getIfPresent(key)) != nil
            return held && cache.resilienceStatistics.knownValues >= 1
        }
    }

    @Test func withRedisAndTheDatabaseDownTheLastKnownValueIsAnsweredAndForgottenOnceRedisIsBack() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "fs1:", codec: .string,
                                                        commandTimeout: .milliseconds(300))
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = (memory + redis).failSafe(maxStale: .seconds(600))
        let db = Database()
        #expect(await poll { redis.isReceivingInvalidations })
        #expect(try await cache.get("k", ttl: .seconds(60), load: db.load) == "row k")
        // The load's own write into Redis is not taken for another client's
        // (see RedisScriptEchoes): once Redis has reported it, still known.
        #expect(await Self.loadAndSettle(cache, redis, server, prefix: "fs1:", key: "k", load: db.load))
        #expect(cache.resilienceStatistics.knownValues == 1)

        await server.kill()
        db.down.store(true, ordering: .relaxed)
        #expect(await poll { !memory.contains("k") }, "contact lost: memory above is flushed")
        #expect(try await cache.get("k", ttl: .seconds(60), load: db.load) == "row k", "the last known value")
        #expect(cache.resilienceStatistics.staleAnswers == 1)
        #expect(!memory.contains("k"), "a stale answer is not kept as fresh")

        try await server.restart()  // empty: whatever changed meanwhile is unknown
        #expect(await poll(timeout: .seconds(10)) { redis.isReceivingInvalidations }, "\(redis.invalidationError ?? "")")
        #expect(await poll { cache.resilienceStatistics.knownValues == 0 }, "back in contact: nothing from before is vouched for")
        await #expect(throws: (any Error).self) { try await cache.get("k", ttl: .seconds(60), load: db.load) }
        db.down.store(false, ordering: .relaxed)
        #expect(try await cache.get("k", ttl: .seconds(60), load: db.load) == "row k")
        await redis.shutdown(); await server.kill()
    }

    @Test func aKeyAnotherClientDeletedIsNeverAnsweredStale() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "fs2:", codec: .string)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = (memory + redis).failSafe(maxStale: .seconds(600))
        let db = Database()
        #expect(await poll { redis.isReceivingInvalidations })
        #expect(try await cache.get("gone", ttl: .seconds(60), load: db.load) == "row gone")
        #expect(try await cache.get("kept", ttl: .seconds(60), load: db.load) == "row kept")
        #expect(await Self.loadAndSettle(cache, redis, server, prefix: "fs2:", key: "gone", load: db.load))
        #expect(await Self.loadAndSettle(cache, redis, server, prefix: "fs2:", key: "kept", load: db.load))
        #expect(try await redisCLI(server, "DEL", "fs2:gone").contains("1"))
        #expect(await poll { !memory.contains("gone") })
        db.down.store(true, ordering: .relaxed)
        let error = await #expect(throws: FetchError.self) { try await cache.get("gone", ttl: .seconds(60), load: db.load) }
        #expect(error?.cause(as: Database.Down.self) != nil)
        #expect(try await cache.get("kept", ttl: .seconds(60), load: db.load) == "row kept", "a hit: Redis still has it")
        await redis.shutdown(); await server.kill()
    }

    /// A refresh ahead replaces the value in Redis only if Redis still holds
    /// the value the refresh replaces: never another client's newer one.
    @Test func aRefreshReplacesInRedisOnlyTheValueItSaw() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "fs3:", codec: .string)
        try await redis.set("old", forKey: "k")
        let fill = Backfill(value: "refreshed", expiresAt: SystemClock().now().advanced(by: .seconds(30)),
                            readStartedAt: .now)
        try await redis.replace("old", with: fill, forKey: "k")
        #expect(try await redis.getIfPresent("k") == "refreshed")
        let left = try #require(try await redis.entry(forKey: "k")?.expiresAt).nanosecondsSince1970 - SystemClock().now().nanosecondsSince1970
        #expect(left > 25_000_000_000 && left <= 30_000_000_000, "\(left) ns left")
        _ = try await redisCLI(server, "SET", "fs3:k", "theirs")
        await #expect(throws: BackfillDeclined.self) { try await redis.replace("refreshed", with: fill, forKey: "k") }
        #expect(try await redis.getIfPresent("k") == "theirs")
        try await redis.remove("j")  // a tombstone newer than the refresh's load
        try await redis.set("old", forKey: "j")
        await #expect(throws: BackfillDeclined.self) { try await redis.replace("old", with: fill, forKey: "j") }
        await redis.shutdown(); await server.kill()
    }
}
