import NIOCore
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Replies beyond the limits, produced by a real redis-server (a Lua script
/// returning nested tables), end up as a typed error and a fresh connection.
@Suite(.serialized) struct RedisInvalidReplyTests {
    static func nested(_ depth: Int) -> String { "local t = 1 for i = 1, \(depth) do t = {t} end return t" }

    @Test func tooDeepReplyFromTheServerFailsTypedAndTheNextRequestReconnects() async throws {
        let server = try await RedisServer()
        let client = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1))
        var reply = try await client.send("EVAL", Self.nested(64), "0")
        var depth = 0
        while case .array(let items?) = reply, items.count == 1 {
            depth += 1
            reply = items[0]
        }
        #expect(depth == 64 && reply == .integer(1), "64 levels are accepted")
        do {
            _ = try await client.send("EVAL", Self.nested(65), "0")
            Issue.record("a reply 65 levels deep was accepted")
        } catch RedisError.invalidReply(let error) {
            #expect(error.kind == .tooDeep)
        }
        // That connection was closed; the next request gets a new one at once.
        #expect(try await client.send("PING") == .simpleString("PONG"))
        await client.shutdown(); await server.kill()
    }

    @Test func bulkAboveTheConfiguredCapFailsTyped() async throws {
        let server = try await RedisServer()
        let client = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1,
                                                                       replyLimits: RESPLimits(maxBulkLength: 1024)))
        _ = try await client.send("SET", "small", String(repeating: "s", count: 1024))
        _ = try await client.send("SET", "big", String(repeating: "b", count: 1025))
        #expect(try await client.send("GET", "small").bytes?.count == 1024)
        do {
            _ = try await client.send("GET", "big")
            Issue.record("a 1025-byte bulk was accepted")
        } catch RedisError.invalidReply(let error) {
            #expect(error.kind == .tooLarge)
        }
        #expect(try await client.send("GET", "small").bytes?.count == 1024)
        await client.shutdown(); await server.kill()
    }
}
