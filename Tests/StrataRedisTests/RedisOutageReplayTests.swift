import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// `outageBacklog:`: writes made while Redis is down are kept and replayed
/// once it is back; another process then reads every new value.
@Suite(.serialized) struct RedisOutageReplayTests {
    typealias Worker = RedisMultiProcessTests.Worker

    @Test func writesDuringAnOutageReachAnotherProcessOnceRedisIsBack() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "out:", codec: .string,
                                                        commandTimeout: .milliseconds(500), outageBacklog: 1_000)
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + redis
        let other = try Worker(url: server.url, prefix: "out:")
        defer { other.process.terminate() }
        #expect(await poll(timeout: .seconds(20)) { other.output.contains("ready") })
        for index in 0..<100 { try await cache.set("old \(index)", forKey: "k\(index)") }
        #expect(await other.ask("get k7") == "value k7 old 7")

        await server.kill()
        for index in 0..<100 { try await cache.set("new \(index)", forKey: "k\(index)") }  // accepted, not thrown
        try await cache.remove("k99")
        #expect(redis.writesAwaitingReplay == 100, "newest per key: \(redis.writesAwaitingReplay)")

        try await server.restart()  // empty: only the replay puts values back
        #expect(await poll(timeout: .seconds(20)) { redis.writesAwaitingReplay == 0 }, "replayed: \(redis.writesReplayed)")
        #expect(redis.writesReplayed == 100 && redis.writesDroppedFromBacklog == 0)
        for index in [0, 7, 42, 98] {
            #expect(await poll { await other.ask("get k\(index)") == "value k\(index) new \(index)" }, "k\(index)")
        }
        #expect(await other.ask("get k99") == "miss k99", "the remove was replayed after the set it replaced")
        var missing: [Int] = []
        for index in 0..<99 where await other.ask("get k\(index)") != "value k\(index) new \(index)" { missing.append(index) }
        #expect(missing.isEmpty, "another process missed the new values of \(missing)")
        await other.stop()
        await redis.shutdown(); await server.kill()
    }

    @Test func withoutABacklogAWriteDuringAnOutageThrows() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "out2:", codec: .string,
                                                        commandTimeout: .milliseconds(300))
        await server.kill()
        await #expect(throws: RedisError.self) { try await redis.set("v", forKey: "k") }
        #expect(redis.writesAwaitingReplay == 0)
        await redis.shutdown()
    }

    @Test func aFullBacklogDropsTheOldestWrites() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "out3:", codec: .string,
                                                        commandTimeout: .milliseconds(300), outageBacklog: 10)
        await server.kill()
        for index in 0..<15 { try await redis.set("v", forKey: "k\(index)") }
        #expect(redis.writesAwaitingReplay == 10 && redis.writesDroppedFromBacklog == 5)
        try await server.restart()
        #expect(await poll(timeout: .seconds(20)) { redis.writesAwaitingReplay == 0 })
        #expect(try await redis.getIfPresent("k14") == "v")
        #expect(try await redis.getIfPresent("k0") == nil, "dropped: the oldest")
        await redis.shutdown(); await server.kill()
    }
}
