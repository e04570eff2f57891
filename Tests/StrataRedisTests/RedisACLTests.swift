import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// ACL users (`redis://user:password@host`) with a real `redis-server`
/// whose default user is switched off: every connection of the level, the
/// pool's and the invalidation connection, must authenticate as the user.
@Suite(.serialized) struct RedisACLTests {
    static let password = "s3cret-app-pw"
    static let wrongPassword = "n0t-the-pw"

    /// A server with the user `app` (all keys, all commands) and the default user off.
    func serverWithAppUser() async throws -> RedisServer {
        let server = try await RedisServer()
        #expect(try await redisCLI(server, "ACL", "SETUSER", "app", "on", ">\(Self.password)", "~*", "+@all").contains("OK"))
        #expect(try await redisCLI(server, "ACL", "SETUSER", "default", "off").contains("OK"))
        // The default user is off now: a client that does not log in is refused.
        #expect(try await redisCLI(server, "PING").contains("NOAUTH"))
        return server
    }

    /// `redis-cli` as `app`: another client, another process.
    func asApp(_ server: RedisServer, _ arguments: String...) async throws -> String {
        try await redisCLIArguments(server, ["--user", "app", "--pass", Self.password, "--no-auth-warning"] + arguments)
    }

    @Test func anACLUserReadsWritesAndHearsInvalidations() async throws {
        let server = try await serverWithAppUser()
        let url = "redis://app:\(Self.password)@127.0.0.1:\(server.port)"
        let redis = try RedisCacheLevel<String, String>(url: url, prefix: "acl1:")
        #expect(redis.client.configuration.username == "app")
        #expect(redis.client.configuration.password == Self.password)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations }, "subscribed as app: \(redis.invalidationError ?? "")")

        try await cache.set("v1", forKey: "k")
        #expect(try await redis.getIfPresent("k") == "v1")
        #expect(try await asApp(server, "GET", "acl1:k").contains("v1"), "written to Redis as app")
        #expect(try await cache.get("k") == "v1")
        await cache.waitForPendingWrites()
        #expect(try await memory.getIfPresent("k") == "v1")

        // Another client changes the key: the tracking connection (logged in as app) reports it.
        #expect(try await asApp(server, "SET", "acl1:k", "v2").contains("OK"))
        #expect(try await poll { try await memory.getIfPresent("k") == nil }, "memory dropped the key")
        #expect(try await cache.get("k") == "v2")

        // Every connection of this level is logged in as app: the pool's and the tracking one.
        // (redis-cli has exited: every client left is this level's.)
        let lines = try await clientList(redis.client)
        let tracking = lines.filter { $0.contains("name=\(RedisInvalidationSubscriber.clientName) ") }
        #expect(tracking.count == 1, "\(lines)")
        #expect(lines.count >= 2 && lines.allSatisfy { $0.contains(" user=app ") }, "\(lines)")
        await redis.shutdown(); await server.kill()
    }

    @Test func aWrongPasswordIsRefusedInWordsWithoutThePassword() async throws {
        let server = try await serverWithAppUser()
        let url = "redis://app:\(Self.wrongPassword)@127.0.0.1:\(server.port)"
        let redis = try RedisCacheLevel<String, String>(url: url, prefix: "acl2:", connections: 1)
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + redis
        let error = await #expect(throws: RedisError.self) { try await redis.getIfPresent("k") }
        guard case .authenticationFailed? = error else {
            Issue.record("not an authentication failure: \(String(describing: error))")
            return
        }
        let text = "\(error!)"
        #expect(text.contains("user \"app\""), "\(text)")
        #expect(text.contains("wrong user name or password"), "\(text)")
        #expect(!text.contains(Self.wrongPassword), "\(text)")
        // The tracking connection says the same, and never subscribes.
        #expect(await poll { redis.invalidationError?.contains("wrong user name or password") == true }, "\(redis.invalidationError ?? "nil")")
        #expect(!redis.isReceivingInvalidations)
        #expect(redis.invalidationError?.contains(Self.wrongPassword) == false)
        // Nor does the configuration, printed.
        for shown in ["\(redis.client.configuration)", String(reflecting: redis.client.configuration)] {
            #expect(!shown.contains(Self.wrongPassword) && shown.contains("app:***@"), "\(shown)")
        }
        // An unknown user: the same refusal (Redis does not say which part is wrong).
        let stranger = RedisClient(configuration: try RedisConfiguration(url: "redis://nobody:\(Self.password)@127.0.0.1:\(server.port)", connections: 1))
        await #expect(throws: RedisError.self) { try await stranger.send("PING") }
        do { _ = try await stranger.send("PING") } catch {
            // Within the slot's backoff the failure is repeated, still in words.
            #expect("\(error)".contains("wrong user name or password"), "\(error)")
            #expect(!"\(error)".contains(Self.password), "\(error)")
        }
        await stranger.shutdown()
        _ = cache
        await redis.shutdown(); await server.kill()
    }

    @Test func noPasswordForAServerThatWantsOneSaysSo() async throws {
        let server = try await serverWithAppUser()
        // Database 1: the connect's SELECT meets NOAUTH.
        let client = RedisClient(configuration: try RedisConfiguration(url: "redis://127.0.0.1:\(server.port)/1", connections: 1))
        let error = await #expect(throws: RedisError.self) { try await client.send("PING") }
        guard case .authenticationFailed(let text)? = error else {
            Issue.record("not an authentication failure: \(String(describing: error))")
            return
        }
        #expect(text.contains("wants a password"), "\(text)")
        await client.shutdown()
        // A user name without a password is refused before anything is sent.
        var configuration = try RedisConfiguration(url: "redis://127.0.0.1:\(server.port)", connections: 1)
        configuration.username = "app"
        let nameOnly = RedisClient(configuration: configuration)
        let second = await #expect(throws: RedisError.self) { try await nameOnly.send("PING") }
        #expect(second == .authenticationFailed("user \"app\" has no password (redis://user:password@host)"), "\(String(describing: second))")
        await nameOnly.shutdown()
        await server.kill()
    }
}
