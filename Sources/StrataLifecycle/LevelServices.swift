import ServiceLifecycle
import Strata
import StrataRedis

// Levels that hold connections or tasks are services of a `ServiceGroup`:
// `run()` waits for the group's graceful shutdown, then shuts the level
// down (a Redis level closes its invalidation connection and, if it owns
// it, its client; a disk level stops its watch and finishes its writes).
// Put them after the services that use them: a group shuts its services
// down in reverse order, so the cache goes last.

extension RedisCacheLevel: Service {
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }
}

extension RedisClient: Service {
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }
}

extension DiskCacheLevel: Service {
    public func run() async throws {
        try? await gracefulShutdown()
        await shutdown()
    }
}
