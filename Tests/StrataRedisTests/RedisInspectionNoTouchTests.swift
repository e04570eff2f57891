import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// The inspector's reads leave Redis's LRU/LFU clocks alone where the server
/// has `CLIENT NO-TOUCH` (7.2+), and say so where it has not: against the
/// real server here (7.0: the fallback) and fakes answering `NO-TOUCH`.
@Suite(.serialized) struct RedisInspectionNoTouchTests {
    /// Whether `server` takes `CLIENT NO-TOUCH` (Redis 7.2+).
    static func hasNoTouch(_ server: RedisServer) async throws -> Bool {
        !(try await redisCLI(server, "CLIENT", "NO-TOUCH", "OFF")).contains("ERR")
    }

    /// `OBJECT FREQ` of `name` under `allkeys-lfu` (a new key starts at 5; its
    /// first access makes 6, always: the increment's odds are 1 at 5).
    static func frequency(_ server: RedisServer, _ name: String) async throws -> Int? {
        Int(try await redisCLI(server, "OBJECT", "FREQ", name).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func aPeekOnTheRealServerTouchesOnlyWithoutNoTouchAndSaysSo() async throws {
        let server = try await RedisServer()
        _ = try await redisCLI(server, "CONFIG", "SET", "maxmemory-policy", "allkeys-lfu")
        let redis = try RedisCacheLevel<String, Data>(url: server.url, prefix: "nt:")
        try await redis.set(Data("v".utf8), forKey: "k")
        try await redis.set(Data("w".utf8), forKey: "listed")
        let noTouch = try await Self.hasNoTouch(server)
        #expect(try await Self.frequency(server, "nt:k") == 5)
        let inspector = try #require(redis.levelInspector)
        let peeked = try #require(try await inspector.peek("k"))
        #expect(peeked.value == Data("v".utf8))
        #expect(peeked.countedAsAccess == !noTouch, "redis-server \(noTouch ? "has" : "lacks") NO-TOUCH")
        #expect(try await Self.frequency(server, "nt:k") == (noTouch ? 5 : 6), "the server's LFU counter")
        // The listing's STRLEN is a read too: touched only without NO-TOUCH.
        _ = try await inspector.keys(10)
        #expect(try await Self.frequency(server, "nt:listed") == (noTouch ? 5 : 6))
        // The pooled connection reads as usual again (NO-TOUCH OFF after the peek).
        _ = try await redis.getIfPresent("listed")
        #expect(try await Self.frequency(server, "nt:listed") ?? 0 >= 6)
        await redis.shutdown(); await server.kill()
    }

    /// A fake Redis 7.2: answers `CLIENT NO-TOUCH` with OK, and `GET`/`PTTL`
    /// in a transaction; records what each connection was sent.
    static func fakeServer(noTouch: Bool, sent: Locked<[[String]]>) async throws -> HostileServer {
        try await HostileServer { command, _ in
            sent.value.withLock { $0.append(command) }
            switch command.first?.uppercased() {
            case "CLIENT" where noTouch: return .write([bytes("+OK\r\n")])
            case "CLIENT": return .write([bytes("-ERR unknown subcommand 'NO-TOUCH'. Try CLIENT HELP.\r\n")])
            case "MULTI": return .write([bytes("+OK\r\n")])
            case "GET", "PTTL": return .write([bytes("+QUEUED\r\n")])
            case "EXEC": return .write([bytes("*2\r\n" + bulk("hello") + ":-1\r\n")])
            case "PING": return .write([bytes("+PONG\r\n")])
            default: return .write([bytes("+OK\r\n")])
            }
        }
    }

    @Test(arguments: [true, false])
    func aPeekIsWrappedInNoTouchOnOneConnection(serverHasNoTouch: Bool) async throws {
        let sent = Locked<[[String]]>([])
        let server = try await Self.fakeServer(noTouch: serverHasNoTouch, sent: sent)
        let redis = try RedisCacheLevel<String, Data>(url: server.url, prefix: "f:", connections: 1, invalidatesLevelsAbove: false)
        let peeked = try #require(try await redis.levelInspector?.peek("k"))
        #expect(peeked.value == Data("hello".utf8) && peeked.expiresAt == nil)
        #expect(peeked.countedAsAccess == !serverHasNoTouch)
        let commands = sent.value.withLock { $0 }.filter { $0.first != "PING" && $0.first != "SELECT" }.map { $0.joined(separator: " ") }
        #expect(commands == ["CLIENT NO-TOUCH ON", "MULTI", "GET f:k", "PTTL f:k", "EXEC", "CLIENT NO-TOUCH OFF"])
        await redis.shutdown()
        await server.close()
    }

    @Test func aListingThatStopsBeforeTheCursorEndsIsASample() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, Data>(url: server.url, prefix: "s:")
        for i in 0..<30 { try await redis.set(Data("v".utf8), forKey: "k\(i)") }
        let inspector = try #require(redis.levelInspector)
        let all = try await inspector.listing(100)
        #expect(all.keys.count == 30 && all.isComplete)
        let exact = try await inspector.listing(30)
        #expect(exact.keys.count == 30 && exact.isComplete, "exactly the limit, and nothing after it")
        let some = try await inspector.listing(10)
        #expect(some.keys.count == 10 && !some.isComplete)
        let hot = try await inspector.hotKeys(5)
        #expect(hot.isWholeLevel && hot.examined == 30 && hot.keys.isEmpty, "Redis keeps no hits or frequency per key")
        await redis.shutdown(); await server.kill()
    }
}
