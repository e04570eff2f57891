import Foundation
import Strata
import StrataRedis
import StrataTestSupport
import Testing

/// The core contract on Redis: entries carry the key's remaining TTL, and
/// batches are `MGET`s whoever asks (generic code, compositions).
@Suite(.serialized) struct RedisEntryTests {
    @Test func entryCarriesTheRemainingTTLAndTheMemoryCopyAboveExpiresWithIt() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "e1:", invalidatesLevelsAbove: false)
        let clock = TestClock(SystemClock().now())
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock)
        let cache = memory + redis
        let before = SystemClock().now()
        // A TTL long enough that a busy machine cannot outlast it between the
        // set and the reads (2 s did, once, with test modules in parallel).
        try await redis.set("v", forKey: "k", ttl: .seconds(60))
        try await redis.set("forever", forKey: "plain")

        let entry = try #require(try await redis.entry(forKey: "k"))
        let deadline = try #require(entry.expiresAt)
        #expect(entry.value == "v")
        #expect(deadline > before.advanced(by: .seconds(50)) && deadline <= SystemClock().now().advanced(by: .seconds(60)))
        #expect(try await redis.entry(forKey: "plain") == CacheEntry(value: "forever", expiresAt: nil))
        #expect(try await redis.entry(forKey: "missing") == nil)

        #expect(try await cache.get("k") == "v")
        await cache.waitForPendingWrites()
        let upper = try #require(try await memory.entry(forKey: "k"))
        let upperDeadline = try #require(upper.expiresAt, "back-filled with the Redis key's deadline, not forever")
        #expect(upperDeadline > before.advanced(by: .seconds(50)) && upperDeadline <= SystemClock().now().advanced(by: .seconds(60)))
        // Memory's clock moves to just before, then to, that deadline.
        clock.advance(by: .nanoseconds(upperDeadline.nanosecondsSince1970 - clock.now().nanosecondsSince1970 - 1_000_000))
        #expect(try await memory.getIfPresent("k") == "v")
        clock.advance(by: .milliseconds(1))
        #expect(try await memory.getIfPresent("k") == nil, "the memory copy expires with the Redis one")
        await redis.shutdown(); await server.kill()
    }

    /// Generic code sees only `some CacheLevel`.
    func genericEntries(_ level: some CacheLevel<String, String>, _ keys: [String], maxConcurrency: Int?) async -> [CacheEntry<String>?] {
        await level.entries(forKeys: keys, maxConcurrency: maxConcurrency)
    }

    @Test func entriesAreOneMGETPer512KeysForGenericCallersAndCompositions() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "e2:", connections: 1,
                                                        invalidatesLevelsAbove: false)
        for i in stride(from: 0, to: 1200, by: 2) { try await redis.set("v\(i)", forKey: "k\(i)") }
        try await redis.set("short", forKey: "k0", ttl: .seconds(30))
        let keys = (0..<1200).map { "k\($0)" }

        var mgets = try await commandCalls(redis.client, "mget")
        let found = await genericEntries(redis, keys, maxConcurrency: 2)
        #expect(try await commandCalls(redis.client, "mget") == mgets + 3, "1200 keys: three MGETs")
        mgets += 3
        #expect(found.count == 1200)
        #expect(found[0]?.value == "short" && found[0]?.expiresAt != nil)
        #expect(found[2] == CacheEntry(value: "v2", expiresAt: nil))
        #expect(found[1] == nil && found[1199] == nil)
        #expect(found.compactMap { $0 }.count == 600)

        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        let some = await cache.batchGetSome(["k2", "k4", "nope", "k2"])
        #expect(some == ["k2": "v2", "k4": "v4"])
        #expect(try await commandCalls(redis.client, "mget") == mgets + 1, "a composition asks Redis with one MGET")
        await cache.waitForPendingWrites()
        #expect(await cache.batchGetSome(["k2", "k4"]) == ["k2": "v2", "k4": "v4"])
        #expect(try await commandCalls(redis.client, "mget") == mgets + 1, "then memory answers")
        await redis.shutdown(); await server.kill()
    }

    @Test func entriesReadAsMissesWhenRedisIsDown() async throws {
        let redis = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:1", prefix: "e3:", invalidatesLevelsAbove: false)
        let found = await redis.entries(forKeys: (0..<600).map { "k\($0)" }, maxConcurrency: nil)
        #expect(found.count == 600 && found.allSatisfy { $0 == nil })
        await #expect(throws: RedisError.self) { try await redis.entry(forKey: "k") }
    }

    /// A value and its expiry are read in one transaction: another client
    /// that keeps replacing the key, alternately with and without a TTL,
    /// never gets one value paired with the other's expiry.
    @Test func aValueAndItsExpiryAreReadTogether() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "e3:", connections: 1,
                                                        invalidatesLevelsAbove: false)
        let other = try RedisClient(url: server.url)
        _ = try await other.send("SET", "e3:k", "with-ttl", "PX", "600000")
        let execs = try await commandCalls(redis.client, "exec")
        #expect(try await redis.entry(forKey: "k")?.expiresAt != nil)
        _ = await redis.entries(forKeys: ["k", "missing"], maxConcurrency: nil)
        #expect(try await commandCalls(redis.client, "exec") == execs + 2, "one transaction per entry, one per batch")

        let writer = Task {
            for i in 0..<2000 where !Task.isCancelled {
                _ = try? await i % 2 == 0 ? other.send("SET", "e3:k", "plain") : other.send("SET", "e3:k", "with-ttl", "PX", "600000")
            }
        }
        var mismatches = 0
        for _ in 0..<1000 {
            guard let entry = try await redis.entry(forKey: "k") else { continue }
            if (entry.value == "with-ttl") != (entry.expiresAt != nil) { mismatches += 1 }
        }
        writer.cancel()
        _ = await writer.value
        #expect(mismatches == 0, "\(mismatches) reads paired a value with another write's expiry")
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }

    /// Deadlines at the ends of the range: one long past removes the key
    /// (never `PX 1`, readable for a millisecond; no overflow computing it),
    /// one centuries away stores the value without expiry.
    @Test func deadlinesLongPastOrFarAwayNeitherTrapNorLinger() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "e4:", invalidatesLevelsAbove: false)
        try await redis.set("v", forKey: "past")
        try await redis.set("w", forKey: "past", expiresAt: CacheInstant(nanosecondsSince1970: .min))
        #expect(try await redis.getIfPresent("past") == nil)
        try await redis.set("x", forKey: "recent", expiresAt: SystemClock().now().advanced(by: .seconds(-1)))
        #expect(try await redis.getIfPresent("recent") == nil)
        try await redis.set("y", forKey: "far", expiresAt: CacheInstant(nanosecondsSince1970: .max))
        #expect(try await redis.entry(forKey: "far") == CacheEntry(value: "y", expiresAt: nil))
        try await redis.set("z", forKey: "soon", ttl: .seconds(60))
        #expect(try await redis.entry(forKey: "soon")?.expiresAt != nil)
        await redis.shutdown(); await server.kill()
    }
}
