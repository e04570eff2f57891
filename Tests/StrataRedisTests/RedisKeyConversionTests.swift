import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

enum RedisRoleKey: String, Codable, Hashable, RedisKeyDecodable { case admin, guest }
struct RedisTenantKey: Codable, Hashable, RedisKeyDecodable {
    let org: String
    let id: Int
}

/// Keys made decodable in one line come back from the bytes Redis reports,
/// and only from exactly those bytes; a stack over Redis then drops just the
/// key another client changed (before, a struct key flushed every level above).
@Suite struct RedisKeyConversionTests {
    @Test func decodedKeysGiveBackTheBytesHeard() {
        #expect(UInt16(cacheKeyBytes: Array("65535".utf8)) == 65535)
        #expect(UInt16(cacheKeyBytes: Array("65536".utf8)) == nil)
        #expect(Int64(cacheKeyBytes: Array("007".utf8)) == nil, "not the bytes 7 stores under")
        #expect(RedisRoleKey(cacheKeyBytes: Array("guest".utf8)) == .guest)
        #expect(RedisRoleKey(cacheKeyBytes: Array("\"guest\"".utf8)) == nil)
        let tenant = RedisTenantKey(org: "acme", id: 7)
        #expect(RedisTenantKey(cacheKeyBytes: tenant.cacheKeyBytes) == tenant)
        #expect(RedisTenantKey(cacheKeyBytes: Array(#"{"org":"acme","id":7}"#.utf8)) == nil, "unsorted: not the bytes it stores under")
        #expect(RedisTenantKey(cacheKeyBytes: Array("garbage".utf8)) == nil)
    }

    @Test func anotherClientsWriteOfAStructKeyDropsOnlyThatKeyAbove() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<RedisTenantKey, String>(url: server.url, prefix: "keys:", codec: .string)
        let other = try RedisCacheLevel<RedisTenantKey, String>(url: server.url, prefix: "keys:", codec: .string, invalidatesLevelsAbove: false)
        let memory = MemoryCacheLevel<RedisTenantKey, String>(capacity: 1 << 20)
        let stack = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        let a = RedisTenantKey(org: "acme", id: 1), b = RedisTenantKey(org: "acme", id: 2)
        try await stack.set("a1", forKey: a)
        try await stack.set("b1", forKey: b)
        _ = try await stack.getIfPresent(a)  // Redis tracks what this client read
        _ = try await redis.getIfPresent(a)
        _ = try await redis.getIfPresent(b)
        try await other.set("a2", forKey: a)
        #expect(await poll { memory.value(forKey: a) == nil }, "another client's write did not reach the level above")
        #expect(memory.value(forKey: b) == "b1", "a struct key's invalidation flushed the whole level above")
        #expect(try await stack.getIfPresent(a) == "a2")
        await redis.shutdown()
        await other.shutdown()
    }
}
