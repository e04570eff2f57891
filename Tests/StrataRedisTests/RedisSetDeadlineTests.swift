import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// A set's deadline goes as a time on the server's clock (`PXAT`): a value
/// must not outlive it however long the write waited in a stalled server.
@Suite(.serialized) struct RedisSetDeadlineTests {
    /// The server is stopped (`SIGSTOP`) with a set of a four-second deadline
    /// in flight, and resumed after the deadline. With `PX` (time left when
    /// sent) it kept the value four seconds past its deadline.
    /// (An outage replay's sets go through the same code; a replay cannot
    /// be made to wait in a stopped server, whose `PING` must answer first.)
    @Test(arguments: ["set", "batch"])
    func aSetTheServerRunsAfterItsDeadlineStoresNothing(path: String) async throws {
        let server = try await RedisServer()
        let prefix = "set-deadline-\(path):"
        let redis = try RedisCacheLevel<String, String>(url: server.url + "/1", prefix: prefix, connections: 1,
                                                        commandTimeout: .seconds(30), invalidatesLevelsAbove: false)
        try await redis.set("warm", forKey: "warm", ttl: .seconds(60))  // connected; the server's clock known
        let deadline = SystemClock().now().advanced(by: .seconds(4))
        kill(server.process.processIdentifier, SIGSTOP)
        let write = Task {
            let began = SystemClock().now()
            if path == "batch" {
                try await AllBatchCache(redis).set(["v"], forKey: ["k"], expiresAt: deadline)
            } else {
                try await redis.set("v", forKey: "k", expiresAt: deadline)
            }
            return began
        }
        #expect(await poll(timeout: .seconds(15)) { SystemClock().now() > deadline.advanced(by: .milliseconds(50)) })
        kill(server.process.processIdentifier, SIGCONT)
        #expect(try await write.value < deadline.advanced(by: .seconds(-1)), "too slow to test: the write began after its deadline")
        let other = try RedisClient(url: server.url + "/1")
        #expect(try await other.send("PTTL", "\(prefix)k") == .integer(-2), "the \(path) stored the value past its deadline")
        await other.shutdown(); await redis.shutdown(); await server.kill()
    }

    /// A set's `PXAT` is never after its deadline, and close to it (within
    /// the round trip of a `TIME`: 3 s allowed for a loaded machine).
    @Test func aSetsExpiryOnTheServerIsNeverAfterItsDeadline() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "pxat:", invalidatesLevelsAbove: false)
        for round in 0..<20 {
            let deadline = SystemClock().now().advanced(by: .seconds(10))
            try await redis.set("v", forKey: "k\(round)", expiresAt: deadline)
            guard case .integer(let at) = try await redis.client.send("PEXPIRETIME", "pxat:k\(round)") else {
                Issue.record("no PEXPIRETIME"); break
            }
            // The server's clock is this machine's here: the PXAT is the deadline, a little earlier.
            let deadlineMilliseconds = Int(deadline.nanosecondsSince1970 / 1_000_000)
            #expect(at <= deadlineMilliseconds, "PXAT \(at) after the deadline \(deadlineMilliseconds)")
            #expect(at > deadlineMilliseconds - 3_000, "PXAT \(at) far before the deadline \(deadlineMilliseconds)")
        }
        #expect(try await redis.client.send("PTTL", "pxat:k0") != .integer(-1), "stored without expiry")
        await redis.shutdown(); await server.kill()
    }

    /// Where `PXAT` is refused (before Redis 6.2: a syntax error), the set is
    /// sent again as a script given the same server time, and later sets go
    /// as that script at once. A fake server refuses `PXAT`.
    @Test func aServerThatRefusesPXATGetsTheDeadlineThroughAScript() async throws {
        let seen = Locked<[[String]]>([])
        let server = try await HostileServer { command, _ in
            seen.value.withLock { $0.append(command) }
            switch command.first?.uppercased() {
            case "TIME":
                let now = SystemClock().now().nanosecondsSince1970 / 1_000
                return .write([bytes("*2\r\n" + bulk("\(now / 1_000_000)") + bulk("\(now % 1_000_000)"))])
            case "SET" where command.contains("PXAT"): return .write([bytes("-ERR syntax error\r\n")])
            default: return .write([bytes("+OK\r\n")])
            }
        }
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "old:", invalidatesLevelsAbove: false)
        let deadline = SystemClock().now().advanced(by: .seconds(30))
        try await redis.set("v", forKey: "k", expiresAt: deadline)
        try await redis.set("w", forKey: "k", expiresAt: deadline)
        let writes = seen.value.withLock { $0 }.filter { $0.first != "TIME" }
        #expect(writes.map { $0.first ?? "" } == ["SET", "EVAL", "EVAL"], "\(writes)")
        if let script = writes.last, script.count == 6, let at = Int64(script[5]) {
            let deadlineMicroseconds = deadline.nanosecondsSince1970 / 1_000
            #expect(at <= deadlineMicroseconds && at > deadlineMicroseconds - 1_000_000, "server deadline \(at)")
        } else {
            Issue.record("not the set script: \(writes.last ?? [])")
        }
        await redis.shutdown(); await server.close()
    }

    /// The script those servers get stores what is left of the server
    /// deadline, and nothing once it is past (run here on a real server).
    @Test func theScriptForServersWithoutPXATStoresWhatIsLeft() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "script:", invalidatesLevelsAbove: false)
        redis.client.serverClock.notePXATRefused()
        try await redis.set("v", forKey: "k", ttl: .seconds(5))
        guard case .integer(let left) = try await redis.client.send("PTTL", "script:k") else { Issue.record("no PTTL"); return }
        #expect(left > 0 && left <= 5_000, "PTTL \(left)")
        let past = try await redis.client.send([RedisCommandName.eval, Array(RedisCacheLevel<String, String>.setBeforeScript.utf8),
                                                bytes("1"), bytes("script:k"), bytes("x"), bytes("1000")])
        #expect(past == .integer(1), "a deadline past deletes the key")
        #expect(try await redis.client.send("EXISTS", "script:k") == .integer(0))
        await redis.shutdown(); await server.kill()
    }
}

/// The back-fill script's rounding: Redis keeps a key through the
/// millisecond of its expiry, so a server deadline less than 2 ms ahead
/// leaves nothing to store (`PX 1` kept the value up to 1 ms past it).
@Suite struct RedisBackfillScriptRoundingTests {
    @Test func aServerDeadlineUnderTwoMillisecondsAheadStoresNothing() async throws {
        let server = try await RedisServer()
        let client = try RedisClient(url: server.url)
        for _ in 0..<20 {
            let now = try #require(RedisServerClock.microseconds(fromTime: try await client.send("TIME")))
            let reply = try await client.send([RedisCommandName.eval, Array(RedisCacheLevel<String, String>.backfillScript.utf8),
                                               bytes("3"), bytes("r:k"), bytes("r:t"), bytes("r:all"),
                                               bytes("v"), [], bytes("-1"), [], [], bytes("\(now + 1_999)")])
            #expect(reply == .bulkString(nil) || reply == .null, "stored with a deadline under 2 ms ahead: \(reply)")
        }
        #expect(try await client.send("EXISTS", "r:k") == .integer(0))
        await client.shutdown(); await server.kill()
    }
}

/// ``RedisServerClock``'s bound, with no server.
@Suite struct RedisServerClockTests {
    @Test func theBoundIsTheSampleLessTheDriftAllowance() {
        let clock = RedisServerClock()
        let start = ContinuousClock.now
        #expect(clock.serverNow(at: start) == nil)
        clock.learn(server: 1_000_000_000, receivedAt: start)
        #expect(clock.serverNow(at: start) == 1_000_000_000)
        // Ten seconds later: ten seconds on, less 1,000 ppm of them (10 ms).
        let later: Int64 = 1_000_000_000 + 10_000_000 - 10_000
        #expect(clock.serverNow(at: start + .seconds(10)) == later)
    }

    @Test func theSampleGivingTheHigherBoundIsKept() {
        let clock = RedisServerClock()
        let start = ContinuousClock.now
        clock.learn(server: 5_000_000, receivedAt: start)
        // A later reply that took long (a stalled server) says less: kept out.
        clock.learn(server: 5_000_000 + 100_000, receivedAt: start + .seconds(1))
        let kept: Int64 = 5_000_000 + 1_000_000 - 1_000
        #expect(clock.serverNow(at: start + .seconds(1)) == kept)
        // A tighter one replaces it.
        clock.learn(server: 5_000_000 + 999_500, receivedAt: start + .seconds(1))
        let tighter: Int64 = 5_000_000 + 999_500
        #expect(clock.serverNow(at: start + .seconds(1)) == tighter)
        clock.forget()
        #expect(clock.serverNow(at: start) == nil)
    }

    @Test func aDeadlineOnTheServersClockIsRoundedDown() {
        #expect(RedisServerClock.floorDivide(-1, 1_000) == -1)
        #expect(RedisServerClock.floorDivide(1_999, 1_000) == 1)
        // Redis keeps a key through the millisecond of its PXAT: one is taken off.
        #expect(RedisServerClock.pxat(forMicroseconds: 2_000_999) == 1_999)
        #expect(RedisServerClock.pxat(forMicroseconds: 2_000_000) == 1_999)
    }

    @Test func aServerClockAheadOfThisMachinesMovesTheDeadlineWithIt() {
        let clock = RedisServerClock()
        let wall = SystemClock()
        // The server is an hour ahead.
        clock.learn(server: wall.now().nanosecondsSince1970 / 1_000 + 3_600_000_000, receivedAt: .now)
        let deadline = wall.now().advanced(by: .seconds(10))
        let onServer = clock.serverMicroseconds(of: deadline, clock: wall)!
        let expected = deadline.nanosecondsSince1970 / 1_000 + 3_600_000_000
        #expect(onServer <= expected && onServer > expected - 100_000, "\(onServer) vs \(expected)")
    }
}
