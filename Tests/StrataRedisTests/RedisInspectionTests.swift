import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// The key inspector on a Redis level, against a real redis-server: `SCAN`
/// bounded by the prefix and a limit, `STRLEN` and `PTTL`, peeks that are
/// no gets of the level.
@Suite struct RedisInspectionTests {
    @Test func listsOnlyItsPrefixWithSizeAndTTLAndStaysBounded() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, Data>(url: server.url, prefix: "insp:", defaultTTL: .seconds(600))
        for i in 0..<1_200 { try await redis.set(Data("value \(i)".utf8), forKey: "key:\(i)") }
        try await redisCLI(server, "SET", "other:key:1", "not ours")
        try await redisCLI(server, "SET", "insp:plain", "forever")
        let inspector = try #require(redis.instrumented(name: "redis").normalize().levelInspector)
        let some = try await inspector.keys(50)
        #expect(some.count == 50)
        #expect(Set(some.map(\.key)).count == 50)
        let all = try await inspector.keys(5_000)
        #expect(all.count == 1_201)
        #expect(!all.contains { $0.key.hasPrefix("other") }, "keys outside the prefix are not the level's")
        let seven = try #require(all.first { $0.key == "key:7" })
        #expect(seven.size == "value 7".utf8.count)
        #expect(seven.ttlLeft.map { $0 > .seconds(500) && $0 <= .seconds(600) } == true)
        #expect(all.first { $0.key == "plain" }?.ttlLeft == nil, "a key without expiry has no TTL left")
        #expect(try await commandCalls(redis.client, "keys") == 0, "never KEYS")
        await redis.shutdown(); await server.kill()
    }

    @Test func peekReadsTheValueAndExpiryWithoutCountingAGet() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, Data>(url: server.url, prefix: "peek:")
        let stack = redis.instrumented(name: "redis").normalize()
        try await stack.set(Data([0xde, 0xad]), forKey: "bin")
        try await redisCLI(server, "PEXPIRE", "peek:bin", "90000")
        let inspector = try #require(stack.levelInspector)
        let before = stack.levelStatistics[0].snapshot()
        let peeked = try #require(try await inspector.peek("bin"))
        #expect(peeked.value == Data([0xde, 0xad]))
        #expect(peeked.size == 2)
        let left = try #require(peeked.expiresAt).nanosecondsSince1970 - SystemClock().now().nanosecondsSince1970
        #expect(left > 60_000_000_000 && left <= 90_000_000_000)
        #expect(try await inspector.peek("absent") == nil)
        let after = stack.levelStatistics[0].snapshot()
        #expect(after.gets == before.gets && after.hits == before.hits && after.misses == before.misses)
        await redis.shutdown(); await server.kill()
    }

    /// Under an LFU `maxmemory-policy`, Redis counts each key's use: the
    /// listing carries it (`OBJECT FREQ`) and hot keys rank by it. Under
    /// any other policy there is no count, and the listing asks for none.
    @Test func hotKeysRankByRedisFrequencyUnderAnLFUPolicy() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, Data>(url: server.url, prefix: "lfu:")
        for i in 0..<20 { try await redis.set(Data("v\(i)".utf8), forKey: "key:\(i)") }
        let inspector = try #require(redis.normalize().levelInspector)
        #expect(try await inspector.keys(100).allSatisfy { $0.frequency == nil }, "no LFU policy: no frequency")
        #expect(try await inspector.hotKeys(3).keys.isEmpty)

        _ = try await redisCLI(server, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
        _ = try await redisCLI(server, "CONFIG", "SET", "lfu-log-factor", "0")  // every access counts
        for _ in 0..<40 { _ = try await redis.getIfPresent("key:3") }
        for _ in 0..<20 { _ = try await redis.getIfPresent("key:11") }
        let listed = try await inspector.keys(100)
        #expect(listed.count == 20 && listed.allSatisfy { $0.frequency != nil })
        let hot = try await inspector.hotKeys(2)
        #expect(hot.keys.map(\.key) == ["key:3", "key:11"], "\(hot.keys)")
        // Listing again keeps the ranking (before Redis 7.2 each listing's
        // STRLEN counts one use of every listed key; from 7.2, none).
        for _ in 0..<5 { _ = try await inspector.keys(100) }
        #expect(try await inspector.hotKeys(2).keys.map(\.key) == ["key:3", "key:11"])
        await redis.shutdown(); await server.kill()
    }
}
