import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// Load-through over a real Redis: `memory + redis`, one load for many
/// concurrent misses, the value in Redis with the loader's TTL, and a load
/// never landing over a value another client set meanwhile (`SET NX`).
@Suite struct RedisLoadThroughTests {
    final class LoadCount: Sendable { let value = Atomic<Int>(0) }

    @Test func concurrentMissesLoadOnceAndRedisKeepsTheValueWithItsTTL() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "load:", codec: .string)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let stack = memory + redis
        let loads = LoadCount(), gate = Gate()
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await stack.get("user:1", ttl: .seconds(30)) { key in
                        loads.value.add(1, ordering: .relaxed)
                        await gate.wait()  // a slow database: the others arrive meanwhile
                        return "row \(key)"
                    }
                }
            }
            #expect(await poll { stack.loadsJoined == 49 })
            gate.open()
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(answers) == ["row user:1"] && answers.count == 50)
        #expect(loads.value.load(ordering: .relaxed) == 1)
        let stored = try #require(try await redis.entry(forKey: "user:1"))
        #expect(stored.value == "row user:1")
        let left = try #require(stored.expiresAt).nanosecondsSince1970 - SystemClock().now().nanosecondsSince1970
        #expect(left > 25_000_000_000 && left <= 30_000_000_000, "\(left) ns left of a 30 s TTL")
        await redis.shutdown()
    }

    @Test func aLoadDoesNotReplaceWhatAnotherClientSetMeanwhile() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "load:", codec: .string)
        let other = try RedisCacheLevel<String, String>(url: server.url, prefix: "load:", codec: .string, invalidatesLevelsAbove: false)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let stack = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        let answer = try await stack.get("k", ttl: nil) { _ in
            try await other.set("theirs", forKey: "k")
            return "mine"
        }
        #expect(answer == "mine")
        #expect(try await other.getIfPresent("k") == "theirs", "the load replaced another client's newer value")
        #expect(try await stack.getIfPresent("k") == "theirs")
        await redis.shutdown()
        await other.shutdown()
    }
}
