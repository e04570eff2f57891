import Foundation
@testable import StrataRedis
import StrataTestSupport
import Testing

/// The key layout: `prefix` (ending in `:`) + the key with `%` and `:` escaped.
@Suite(.serialized) struct RedisKeyPrefixTests {
    @Test func emptyPrefixIsRefusedAtInitWithATypedError() throws {
        #expect {
            try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:6379", prefix: "")
        } throws: { error in
            guard case .invalidPrefix? = error as? RedisError else { return false }
            return true
        }
    }

    @Test func prefixWithoutSeparatorGetsOneAndKeysAreEscaped() throws {
        let bare = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:6379", prefix: "app")
        let ending = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:6379", prefix: "app:")
        #expect(bare.prefix == Array("app:".utf8) && ending.prefix == Array("app:".utf8))
        #expect(bare.redisKey("user:7") == Array("app:user%3A7".utf8))
        #expect(bare.redisKey("50%:a") == Array("app:50%25%3Aa".utf8))
        #expect(bare.redisKey("plain") == Array("app:plain".utf8))
    }

    @Test func nestedPrefixesNeverShareAKeyAndClearStaysInItsOwnLevel() async throws {
        let server = try await RedisServer()
        let outer = try RedisCacheLevel<String, String>(url: server.url, prefix: "app:")
        let inner = try RedisCacheLevel<String, String>(url: server.url, prefix: "app:x:")
        let app = try RedisCacheLevel<String, String>(url: server.url, prefix: "app")
        let apple = try RedisCacheLevel<String, String>(url: server.url, prefix: "apple")
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
