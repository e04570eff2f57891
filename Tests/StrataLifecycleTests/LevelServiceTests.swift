import Foundation
import Logging
import ServiceLifecycle
import Strata
import StrataLifecycle
import StrataRedis
import StrataTestSupport
import Testing

/// Redis and disk levels as services of a `ServiceGroup`: used while the
/// group runs, shut down when it shuts down gracefully.
@Suite struct LevelServiceTests {
    @Test func aServiceGroupShutsItsLevelsDown() async throws {
        let server = try await RedisServer()
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "svc:", codec: .string)
        let disk = try DiskCacheLevel<String, String>(name: "disk", directory: dir.url, capacity: 1 << 20)
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20) + disk + redis
        let group = ServiceGroup(services: [disk, redis], gracefulShutdownSignals: [],
                                 logger: Logger(label: "strata.test.lifecycle"))
        let running = Task { try await group.run() }
        try await stack.set("v", forKey: "k")
        #expect(try await redis.getIfPresent("k") == "v")
        #expect(!disk.isShutDown)
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(disk.isShutDown)
        await #expect(throws: (any Error).self, "the Redis level's client is closed") { try await redis.ping() }
        await server.kill()
    }
}
