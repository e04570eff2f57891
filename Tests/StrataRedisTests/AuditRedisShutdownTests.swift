import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Audit (rule 1/2): cancellation and shutdown sequences through Redis.
@Suite struct AuditRedisShutdownTests {
    /// `memory + redis`, set "new" from a task already cancelled. The memory
    /// half stores "new"; the Redis half throws `CancellationError` before
    /// sending (`RedisCacheLevel.sendWrite` checks cancellation), and the
    /// composition's clean-up remove of Redis's old value is cancelled the
    /// same way. Memory says "new", Redis (every other process, and this one
    /// once memory lets the key go) says "old".
    @Test func cancelledSetLeavesMemoryAndRedisDisagreeing() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "auditcancel:", codec: .string)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await cache.set("old", forKey: "k")

        let writer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await cache.set("new", forKey: "k")
        }
        await #expect(throws: CancellationError.self) { try await writer.value }

        let above = memory.value(forKey: "k")
        let below = try await redis.getIfPresent("k")
        #expect(above == below, "memory holds \(String(describing: above)), Redis \(String(describing: below))")
        await cache.onMemoryWarning()
        let later = try await cache.getIfPresent("k")
        #expect(!(above == "new" && later == "old"), "answered \"new\", then the overwritten \"old\"")
        await redis.shutdown(); await server.kill()
    }
}

extension AuditRedisShutdownTests {
    /// A level dropped without `shutdown()`. Its client's pooled connections
    /// stayed open for the life of the process (NIO's event loop keeps a
    /// registered channel open until it is closed, and the client had no
    /// deinit): every level created and dropped leaked its sockets. Now the
    /// client's deinit closes them.
    @Test func aDroppedLevelClosesItsConnections() async throws {
        let server = try await RedisServer()
        let observer = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1))
        let listed = try await clientList(observer).count  // the observer's own connection
        let sockets = socketsTo(server.port)  // the observer's, and the duplicate its queue writes through
        weak var dropped: RedisCacheLevel<String, String>?
        weak var droppedClient: RedisClient?
        do {
            let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "auditdrop:", codec: .string)
            let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
            let cache = memory + level
            #expect(await poll { level.isReceivingInvalidations })
            try await cache.set("v", forKey: "k")
            _ = try await level.getIfPresent("k")
            #expect(socketsTo(server.port) > sockets, "the tracking connection's and a pooled one's")
            #expect(try await clientList(observer).count > listed)
            dropped = level
            droppedClient = level.client
        }
        #expect(await poll { dropped == nil && droppedClient == nil }, "nothing keeps the level or its client alive")
        let closed = await poll { socketsTo(server.port) == sockets }
        #expect(closed, "\(socketsTo(server.port) - sockets) sockets left open by a dropped level")
        let left = try await poll { try await clientList(observer).count == listed }
        let clients = try await clientList(observer)
        #expect(left, "the server still lists \(clients)")
        await observer.shutdown(); await server.kill()
    }

    /// A Redis level under a disk level, both reporting changes, dropped with
    /// their composition. The composition's listeners made the two hold each
    /// other (the disk level's held the Redis level, the Redis level's held
    /// the disk level), so neither was ever freed and the Redis level's
    /// connections stayed open for the life of the process.
    @Test func aLevelDroppedWithACompositionOverADiskLevelClosesItsConnections() async throws {
        let server = try await RedisServer()
        let observer = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1))
        let listed = try await clientList(observer).count
        let root = TemporaryDirectory(); defer { root.remove() }
        weak var droppedLevel: RedisCacheLevel<String, String>?
        weak var droppedDisk: DiskCacheLevel<String, String>?
        do {
            let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "auditdropdisk:", codec: .string)
            let disk = try DiskCacheLevel<String, String>(directory: root.url, capacity: 1 << 20)
            let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + disk + level
            #expect(await poll { level.isReceivingInvalidations })
            try await cache.set("v", forKey: "k")
            #expect(try await cache.getIfPresent("k") == "v")
            #expect(try await clientList(observer).count > listed)
            droppedLevel = level
            droppedDisk = disk
        }
        #expect(await poll(timeout: .seconds(10)) { droppedLevel == nil && droppedDisk == nil },
                "nothing keeps the levels alive")
        let left = try await poll(timeout: .seconds(10)) { try await clientList(observer).count == listed }
        let clients = try await clientList(observer)
        #expect(left, "the server still lists \(clients)")
        await observer.shutdown(); await server.kill()
    }

    /// The invalidation connection of a level dropped without `shutdown()`
    /// (`invalidatesLevelsAbove` on, subscribed): it closes, and its loop
    /// (a task that reconnects while the level lives) ends.
    @Test func aDroppedLevelClosesItsInvalidationConnection() async throws {
        let server = try await RedisServer()
        let observer = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1))
        let listed = try await clientList(observer).count
        let sockets = socketsTo(server.port)
        func tracking() async throws -> Int {
            try await clientList(observer).filter { $0.contains("name=\(RedisInvalidationSubscriber.clientName) ") }.count
        }
        weak var dropped: RedisCacheLevel<String, String>?
        weak var droppedSubscriber: RedisInvalidationSubscriber?
        do {
            let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "auditdroptracking:", codec: .string,
                                                            invalidatesLevelsAbove: true)
            let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + level
            #expect(await poll { level.isReceivingInvalidations })
            try await cache.set("v", forKey: "k")  // on the tracking connection
            #expect(try await cache.getIfPresent("k") == "v")
            #expect(try await tracking() == 1)
            dropped = level
            droppedSubscriber = level.subscriber
        }
        #expect(await poll { dropped == nil }, "nothing keeps the level alive")
        #expect(await poll { droppedSubscriber == nil }, "the subscriber's loop ended and let it go")
        let closed = try await poll { try await tracking() == 0 }
        #expect(closed, "the tracking connection is still listed")
        let listedAgain = try await poll { try await clientList(observer).count == listed }
        let clients = try await clientList(observer)
        #expect(listedAgain, "the server still lists \(clients)")
        #expect(await poll { socketsTo(server.port) == sockets })
        await observer.shutdown(); await server.kill()
    }

    /// A level dropped while its invalidation connection cannot connect (no
    /// server: its loop waits out a backoff between attempts) stops trying:
    /// the loop ends and lets the subscriber go.
    @Test func aDroppedLevelStopsReconnectingItsInvalidationConnection() async throws {
        weak var droppedSubscriber: RedisInvalidationSubscriber?
        do {
            let level = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:1", prefix: "auditdropdown:", codec: .string,
                                                            invalidatesLevelsAbove: true)
            let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + level
            #expect(await poll { level.invalidationError != nil }, "the first attempt failed")
            _ = try? await cache.getIfPresent("k")
            droppedSubscriber = level.subscriber
        }
        #expect(await poll { droppedSubscriber == nil }, "the subscriber is still retrying for a level that is gone")
    }

    /// A level whose last reference is dropped while a get is in flight (the
    /// server paused: the get waits for its reply). The get keeps the level,
    /// its client and its connections alive; it completes (or fails with a
    /// `RedisError`), and only then do the connections close.
    @Test func aLevelDroppedWhileAGetIsInFlightClosesItsConnectionsWhenTheGetEnds() async throws {
        let server = try await RedisServer()
        let observer = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1))
        let listed = try await clientList(observer).count
        let sockets = socketsTo(server.port)
        weak var dropped: RedisCacheLevel<String, String>?
        let queue: RedisRequestQueue
        let get: Task<Result<String?, any Error>, Never>
        do {
            let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "auditdropinflight:", codec: .string,
                                                            connections: 1)
            let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + level
            #expect(await poll { level.isReceivingInvalidations })
            try await cache.set("v", forKey: "k")
            queue = try await level.client.connection().queue  // the pool's one connection
            // Every client's commands wait (the observer's reply comes once the pause is in effect).
            _ = try await observer.send("CLIENT", "PAUSE", "2000", "ALL")  // long enough for a loaded machine to send the get
            get = Task { await Result { try await level.getIfPresent("k") } }
            dropped = level
        }
        #expect(await poll { queue.waitingCount == 1 }, "the get is sent and waits for its reply")
        #expect(dropped != nil, "the get in flight holds the level")
        #expect(!queue.isClosed, "a level in use keeps its connections")
        switch await get.value {
        case .success(let value): #expect(value == "v")
        case .failure(let error): #expect(error is RedisError, "\(error)")
        }
        #expect(await poll { dropped == nil }, "the get ended and let the level go")
        #expect(await poll { queue.isClosed }, "the pooled connection closes once the level is gone")
        let listedAgain = try await poll { try await clientList(observer).count == listed }
        let clients = try await clientList(observer)
        #expect(listedAgain, "the server still lists \(clients)")
        #expect(await poll { socketsTo(server.port) == sockets })
        await observer.shutdown(); await server.kill()
    }

    /// `shutdown()` and then the last reference dropped: the deinits find
    /// everything closed already and close nothing twice (no crash, no error).
    @Test func aLevelShutDownThenDroppedIsFine() async throws {
        let server = try await RedisServer()
        weak var dropped: RedisCacheLevel<String, String>?
        do {
            let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "auditshutdrop:", codec: .string)
            let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + level
            #expect(await poll { level.isReceivingInvalidations })
            try await cache.set("v", forKey: "k")
            _ = try await level.getIfPresent("k")
            await level.shutdown()
            #expect(await poll { socketsTo(server.port) == 0 })
            await #expect(throws: RedisError.connectionClosed) { try await level.getIfPresent("k") }
            dropped = level
        }
        #expect(await poll { dropped == nil })
        #expect(socketsTo(server.port) == 0)
        await server.kill()
    }
}

extension AuditRedisShutdownTests {
    /// A client (not a level) dropped without `shutdown()`, with every slot
    /// of its pool connected: each connection closes.
    @Test func aDroppedClientClosesItsPooledConnections() async throws {
        let server = try await RedisServer()
        let observer = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1))
        let listed = try await clientList(observer).count
        let sockets = socketsTo(server.port)
        weak var dropped: RedisClient?
        do {
            let client = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 3))
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<30 { group.addTask { _ = try? await client.send("PING") } }
            }
            #expect(try await clientList(observer).count == listed + 3)
            dropped = client
        }
        #expect(await poll { dropped == nil })
        let listedAgain = try await poll { try await clientList(observer).count == listed }
        let clients = try await clientList(observer)
        #expect(listedAgain, "the server still lists \(clients)")
        #expect(await poll { socketsTo(server.port) == sockets })
        await observer.shutdown(); await server.kill()
    }
}

extension AuditRedisShutdownTests {
    /// `clear()` does not throw, so once it returns the level is empty. Called
    /// from a cancelled task (a request handler whose client went away, a
    /// shutdown path in a cancelled task), the Redis level's `clear()` is
    /// `try? await clearPrefix()`: the tombstone write and the `SCAN` both
    /// fail with `CancellationError`, which is swallowed, and nothing is
    /// deleted. Through `memory + redis`, memory is emptied, and the next get
    /// answers the cleared value from Redis (and back-fills it).
    @Test func clearFromACancelledTaskReturnsWithoutClearingRedis() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "auditclear:", codec: .string)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await cache.set("cleared", forKey: "k")

        let clearing = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await cache.clear()  // returns normally
        }
        await clearing.value

        let after = try await cache.getIfPresent("k")
        #expect(after == nil, "a get after clear() returned answered \(String(describing: after))")
        await redis.shutdown(); await server.kill()
    }
}
