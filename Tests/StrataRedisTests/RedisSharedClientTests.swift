import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Several levels on one client (one pool for many prefixes), and the pool
/// size and connect timeout set on the level (#33).
@Suite struct RedisSharedClientTests {
    @Test func levelsOnOneClientShareItsPoolAndOneShutdownLeavesTheOthers() async throws {
        let server = try await RedisServer()
        let client = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1))
        let users = try RedisCacheLevel<String, String>(client: client, prefix: "users:", codec: .string)
        let posts = try RedisCacheLevel<String, String>(client: client, prefix: "posts:", codec: .string)
        #expect(users.client === posts.client)
        try await users.set("ada", forKey: "1")
        try await posts.set("hello", forKey: "1")
        #expect(try await redisCLI(server, "GET", "users:1").contains("ada"))
        await users.shutdown()
        #expect(try await posts.getIfPresent("1") == "hello", "one level's shutdown closed the shared client")
        await posts.shutdown()
        await client.shutdown()
        await server.kill()
    }

    @Test func poolSizeAndConnectTimeoutAreSetOnTheLevel() throws {
        let level = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:6399", prefix: "cfg:", codec: .string,
                                                         connections: 5, connectTimeout: .milliseconds(150))
        #expect(level.client.configuration.connections == 5)
        #expect(level.client.configuration.connectTimeout == .milliseconds(150))
    }
}
