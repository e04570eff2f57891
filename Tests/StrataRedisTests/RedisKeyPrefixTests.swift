import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// The key layout: `prefix` (ending in `:`) + the key as it is (what
/// `redis-cli` and every other client name it), or with `%` and `:` escaped
/// (``RedisKeyLayout/escaped``); overlapping natural prefixes are refused.
@Suite(.serialized) struct RedisKeyPrefixTests {
    @Test func emptyPrefixIsRefusedAtInitWithATypedError() throws {
        #expect {
            try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:6379", prefix: "")
        } throws: { error in
            guard case .invalidPrefix? = error as? RedisError else { return false }
            return true
        }
    }

    @Test func prefixWithoutSeparatorGetsOneAndKeysAreStoredAsTheyAre() throws {
        let bare = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:6379", prefix: "app")
        let ending = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:6379", prefix: "app:")
        #expect(bare.prefix == Array("app:".utf8) && ending.prefix == Array("app:".utf8))
        #expect(bare.redisKey("user:7") == Array("app:user:7".utf8), "not what redis-cli GET app:user:7 reads")
        #expect(bare.redisKey("50%:a") == Array("app:50%:a".utf8))
        let escaped = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:6379", prefix: "app", keyLayout: .escaped)
        #expect(escaped.redisKey("user:7") == Array("app:user%3A7".utf8))
        #expect(escaped.redisKey("50%:a") == Array("app:50%25%3Aa".utf8))
        #expect(escaped.redisKey("plain") == Array("app:plain".utf8))
    }

    /// A natural prefix that starts another live one's (or the reverse)
    /// would take that level's keys for its own: refused while both live.
    @Test func overlappingNaturalPrefixesAreRefusedWhileBothLive() throws {
        let url = "redis://127.0.0.1:6379/3"
        var outer: RedisCacheLevel<String, String>? = try RedisCacheLevel<String, String>(url: url, prefix: "ovl:")
        #expect(throws: RedisError.self) { try RedisCacheLevel<String, String>(url: url, prefix: "ovl:users:") }
        let deep = try RedisCacheLevel<String, String>(url: url, prefix: "deep:x:")
        #expect(throws: RedisError.self) { try RedisCacheLevel<String, String>(url: url, prefix: "deep") }
        // The same prefix again, another database, or a prefix that only shares letters: fine.
        var same: RedisCacheLevel<String, String>? = try RedisCacheLevel<String, String>(url: url, prefix: "ovl")
        _ = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:6379/4", prefix: "ovl:users:")
        _ = try RedisCacheLevel<String, String>(url: url, prefix: "ovlx:")
        do {
            _ = try RedisCacheLevel<String, String>(url: url, prefix: "ovl:users:")
        } catch {
            #expect("\(error)".contains("overlaps \"ovl:\""), "\(error)")
        }
        withExtendedLifetime(deep) {}
        outer = nil
        #expect(throws: RedisError.self) { try RedisCacheLevel<String, String>(url: url, prefix: "ovl:users:") }
        same = nil
        _ = (outer, same)
        _ = try RedisCacheLevel<String, String>(url: url, prefix: "ovl:users:")  // both levels on ovl: are gone
    }

    @Test func aKeyWrittenByRedisCLIIsReadAndItsChangeIsHeard() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "app:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let stack = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        #expect(try await redisCLI(server, "SET", "app:user:7", "from-cli").contains("OK"))
        #expect(try await stack.getIfPresent("user:7") == "from-cli")
        // Kept above once the report of that SET has come (it may drop the first back-fill).
        #expect(await poll {
            _ = try? await stack.getIfPresent("user:7")
            await stack.waitForPendingWrites()
            return memory.value(forKey: "user:7") == "from-cli"
        })
        #expect(try await redisCLI(server, "SET", "app:user:7", "changed").contains("OK"))
        #expect(await poll { memory.value(forKey: "user:7") == nil }, "a change by redis-cli did not reach the level above")
        try await stack.set("mine", forKey: "user:8")
        #expect(try await redisCLI(server, "GET", "app:user:8").contains("mine"))
        await redis.shutdown()
        await server.kill()
    }

    @Test func escapedNestedPrefixesNeverShareAKeyAndClearStaysInItsOwnLevel() async throws {
        let server = try await RedisServer()
        let outer = try RedisCacheLevel<String, String>(url: server.url, prefix: "app:", keyLayout: .escaped)
        let inner = try RedisCacheLevel<String, String>(url: server.url, prefix: "app:x:", keyLayout: .escaped)
        let app = try RedisCacheLevel<String, String>(url: server.url, prefix: "app", keyLayout: .escaped)
        let apple = try RedisCacheLevel<String, String>(url: server.url, prefix: "apple", keyLayout: .escaped)
        // Unescaped, both would be the Redis key "app:x:1"; and "app" + "le:1" would be "apple" + ":1".
        try await outer.set("outer", forKey: "x:1")
        try await inner.set("inner", forKey: "1")
        try await app.set("app", forKey: "le:1")
        try await apple.set("apple", forKey: ":1")
        #expect(try await outer.get("x:1") == "outer")
        #expect(try await inner.get("1") == "inner")
        #expect(try await app.get("le:1") == "app")
        #expect(try await apple.get(":1") == "apple")
        guard case .array(let names?) = try await outer.client.send("KEYS", "*") else { Issue.record("no KEYS reply"); return }
        let keys = names.compactMap(\.bytes).map { String(decoding: $0, as: UTF8.self) }.sorted()
        #expect(keys == ["app:le%3A1", "app:x%3A1", "app:x:1", "apple:%3A1"])

        #expect(try await outer.clearPrefix() == 2, "app:'s own two keys")
        #expect(try await inner.get("1") == "inner", "app:x: keeps its key")
        #expect(try await apple.get(":1") == "apple")
        #expect(try await outer.getIfPresent("x:1") == nil)
        await outer.shutdown(); await inner.shutdown(); await app.shutdown(); await apple.shutdown(); await server.kill()
    }
}
