import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOEmbedded
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// Near-cache invalidation with a real `redis-server`: changes made by other
/// clients (another process: `redis-cli`) drop keys from the levels above.
@Suite(.serialized) struct RedisInvalidationTests {
    /// What a level published, as seen by one extra listener.
    final class Heard: Sendable {
        private let items = Mutex<[CacheInvalidation<String>]>([])
        /// The subscription it hears through, for as long as it lives.
        let subscription = Mutex<CacheSubscription?>(nil)
        var all: [CacheInvalidation<String>] { items.withLock { $0 } }
        func count(_ invalidation: CacheInvalidation<String>) -> Int { all.filter { $0 == invalidation }.count }
        func add(_ invalidation: CacheInvalidation<String>) { items.withLock { $0.append(invalidation) } }
    }

    func listen(_ redis: RedisCacheLevel<String, String>) -> Heard {
        let heard = Heard()
        heard.subscription.withLock { $0 = redis.subscribe { heard.add($0.invalidation) } }
        return heard
    }

    /// Writes through `write`, then waits until the invalidation that write
    /// causes has been applied by every listener registered so far (listeners
    /// hear an invalidation one after another, in registration order, so a
    /// listener registered now hears it last), so that what is read afterwards
    /// stays above.
    func settled(_ redis: RedisCacheLevel<String, String>, _ key: String, _ write: () async throws -> Void) async throws {
        let last = listen(redis)
        try await write()
        #expect(await poll { last.count(.key(key)) > 0 || last.count(.all) > 0 }, "the write's own invalidation for \(key)")
    }

    @Test func anotherProcessWritingAKeyDropsItFromMemoryAbove() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv1:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        let heard = listen(redis)
        #expect(await poll { redis.isReceivingInvalidations })
        try await settled(redis, "user:7") { try await redis.set("old", forKey: "user:7") }
        #expect(try await cache.get("user:7") == "old")
        await cache.waitForPendingWrites()
        #expect(try await memory.getIfPresent("user:7") == "old")

        let start = ContinuousClock.now
        // Another process, another client; the key as stored: prefix + key.
        #expect(try await redisCLI(server, "SET", "inv1:user:7", "new").contains("OK"))
        #expect(try await poll { try await memory.getIfPresent("user:7") == nil }, "memory dropped the key")
        print("invalidation delay (redis-cli SET → memory dropped, incl. process exit): \(ContinuousClock.now - start)")
        #expect(try await cache.get("user:7") == "new")
        #expect(heard.count(.key("user:7")) >= 2, "own write and the other client's: \(heard.all)")
        #expect(redis.nearCacheFlushes == 0, "no flush: it subscribed before the level was used")
        await redis.shutdown(); await server.kill()
    }

    @Test func deleteExpiryAndFlushDBEachInvalidate() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv2:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        let heard = listen(redis)
        #expect(await poll { redis.isReceivingInvalidations })
        for key in ["del", "exp", "a", "b"] {
            try await settled(redis, key) { try await redis.set("v", forKey: key) }
            #expect(try await cache.get(key) == "v")
        }
        await cache.waitForPendingWrites()

        try await redisCLI(server, "DEL", "inv2:del")
        #expect(try await poll { try await memory.getIfPresent("del") == nil }, "DEL")

        try await redisCLI(server, "PEXPIRE", "inv2:exp", "300")
        // Heard for the set, for PEXPIRE (a change), and when Redis deletes the expired key.
        #expect(await poll { heard.count(.key("exp")) >= 3 }, "expiry: \(heard.all)")
        #expect(try await memory.getIfPresent("exp") == nil)

        #expect(try await memory.getIfPresent("a") == "v")
        let flushes = redis.nearCacheFlushes
        try await redisCLI(server, "FLUSHDB")
        #expect(await poll { redis.nearCacheFlushes == flushes + 1 }, "FLUSHDB is a flush")
        // Counted before the listeners hear it; this one was registered last.
        #expect(await poll { heard.count(.all) == 1 })
        #expect(try await memory.getIfPresent("a") == nil)
        #expect(try await memory.getIfPresent("b") == nil)
        await redis.shutdown(); await server.kill()
    }

    func trackingClientID(_ redis: RedisCacheLevel<String, String>) async throws -> String? {
        try await clientList(redis.client).first { $0.contains("name=\(RedisInvalidationSubscriber.clientName) ") }?
            .split(separator: " ").first { $0.hasPrefix("id=") }.map { String($0.dropFirst(3)) }
    }

    @Test func killedInvalidationConnectionFlushesAboveAndResubscribes() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv3:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await settled(redis, "k") { try await redis.set("v1", forKey: "k") }
        #expect(try await cache.get("k") == "v1")
        await cache.waitForPendingWrites()
        #expect(try await memory.getIfPresent("k") == "v1")

        let id = try #require(try await trackingClientID(redis))
        guard case .integer(1) = try await redis.client.send("CLIENT", "KILL", "ID", id) else { Issue.record("not killed"); return }
        #expect(try await poll { try await memory.getIfPresent("k") == nil }, "the levels above are flushed")
        #expect(redis.nearCacheFlushes >= 1)
        #expect(await poll { redis.invalidationSubscriptions == 2 && redis.isReceivingInvalidations }, "resubscribed")
        #expect(try await trackingClientID(redis) != id)

        try await settled(redis, "k") { try await redis.set("v2", forKey: "k") }
        #expect(try await cache.get("k") == "v2")
        await cache.waitForPendingWrites()
        #expect(try await memory.getIfPresent("k") == "v2")
        try await redisCLI(server, "SET", "inv3:k", "v3")
        #expect(try await poll { try await memory.getIfPresent("k") == nil }, "a later write by another client still invalidates")
        #expect(try await cache.get("k") == "v3")
        await redis.shutdown(); await server.kill()
    }

    @Test func restartedServerFlushesAboveAndNoStaleValueIsServedAfterReconnection() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv4:", commandTimeout: .milliseconds(500))
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await settled(redis, "k") { try await redis.set("v1", forKey: "k") }
        #expect(try await cache.get("k") == "v1")
        await cache.waitForPendingWrites()
        await server.kill()
        #expect(try await poll { try await memory.getIfPresent("k") == nil }, "flushed when the connection dropped")
        try await server.restart()  // empty: no persistence
        #expect(await poll(timeout: .seconds(10)) { redis.isReceivingInvalidations }, "resubscribed: \(redis.invalidationError ?? "")")
        try await redisCLI(server, "SET", "inv4:k", "fresh")
        #expect(try await poll { try await cache.get("k") == "fresh" })
        await redis.shutdown(); await server.kill()
    }

    @Test func stoppedServerGetsFallThroughWithinTheTimeoutAndTheNearCacheIsFlushed() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv10:", commandTimeout: .milliseconds(400))
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis + BasicFetcher<String, String> { "origin:\($0)" }
        #expect(await poll { redis.isReceivingInvalidations })
        try await settled(redis, "k") { try await redis.set("v", forKey: "k") }
        #expect(try await cache.get("k") == "v")
        await cache.waitForPendingWrites()
        #expect(try await memory.getIfPresent("k") == "v")

        kill(server.process.processIdentifier, SIGSTOP)
        defer { kill(server.process.processIdentifier, SIGCONT) }
        let stopped = ContinuousClock.now
        // The tracking connection misses its health-check PING: the levels above are flushed.
        #expect(try await poll { try await memory.getIfPresent("k") == nil }, "flushed while Redis is stopped")
        for key in ["a", "b", "c"] {
            let start = ContinuousClock.now
            #expect(try await cache.get(key) == "origin:\(key)")
            #expect(ContinuousClock.now - start < .seconds(2), "a get falls through within its timeout")
        }
        // Stopped for 5 s in all.
        try await Task.sleep(until: stopped + .seconds(5))
        kill(server.process.processIdentifier, SIGCONT)
        #expect(await poll(timeout: .seconds(10)) { redis.isReceivingInvalidations && redis.invalidationSubscriptions >= 2 })
        try await redisCLI(server, "SET", "inv10:k", "after")
        #expect(try await poll { try await cache.get("k") == "after" }, "no stale value after the stop")
        await redis.shutdown(); await server.kill()
    }

    @Test func invalidatesLevelsAboveFalseOpensNoTrackingConnection() async throws {
        let server = try await RedisServer()
        let off = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv5:", invalidatesLevelsAbove: false)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + off
        try await off.set("v", forKey: "k")
        #expect(try await cache.get("k") == "v")
        await cache.waitForPendingWrites()
        let clients = try await clientList(off.client)
        #expect(!clients.isEmpty)
        #expect(!clients.contains { $0.contains("name=\(RedisInvalidationSubscriber.clientName) ") || $0.contains("resp=3") }, "\(clients)")
        #expect(!off.isReceivingInvalidations && off.invalidationSubscriptions == 0)

        // The same with it on: one RESP3 tracking connection.
        let on = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv5:")
        let cacheOn = MemoryCacheLevel<String, String>(capacity: 1 << 20) + on
        _ = cacheOn
        #expect(await poll { on.isReceivingInvalidations })
        let tracking = try await clientList(off.client).filter { $0.contains("name=\(RedisInvalidationSubscriber.clientName) ") }
        #expect(tracking.count == 1 && tracking[0].contains("resp=3") && tracking[0].contains("flags=t"), "\(tracking)")
        await off.shutdown(); await on.shutdown(); await server.kill()
    }

    @Test func everyLevelAboveDropsTheKeyThroughWrappersAndNesting() async throws {
        let server = try await RedisServer()
        let directory = TemporaryDirectory("redis-inv")
        defer { directory.remove() }
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv6:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let disk = try DiskCacheLevel<String, String>(directory: directory.url, capacity: 1 << 20)
        // A wrapper between: values are stored lower-cased in Redis, upper-cased above it.
        let mapped = redis.mapValues({ $0.uppercased() }, inverse: { $0.lowercased() })
        let cache = memory + disk + mapped
        let nested = MemoryCacheLevel<String, String>(capacity: 1 << 20) + (memory + mapped)
        _ = nested
        #expect(await poll { redis.isReceivingInvalidations })
        try await settled(redis, "k") { try await redis.set("old", forKey: "k") }
        #expect(try await cache.get("k") == "OLD")
        await cache.waitForPendingWrites()
        let state = "flushes \(redis.nearCacheFlushes), subscriptions \(redis.invalidationSubscriptions), error \(redis.invalidationError ?? "none"), received \(redis.invalidationsReceived), skipped \(cache.backfillsSkipped), failed \(cache.backfillFailures), applied \(cache.invalidationsApplied)"
        #expect(try await memory.getIfPresent("k") == "OLD", "\(state)")
        #expect(try await disk.getIfPresent("k") == "OLD", "\(state)")
        #expect(try await nested.get("k") == "OLD")
        await nested.waitForPendingWrites()
        #expect(try await nested.upper.getIfPresent("k") == "OLD")

        try await redisCLI(server, "SET", "inv6:k", "new")
        #expect(try await poll { try await memory.getIfPresent("k") == nil }, "memory")
        #expect(try await poll { try await disk.getIfPresent("k") == nil }, "disk")
        #expect(try await poll { try await nested.upper.getIfPresent("k") == nil }, "the outer memory of a nested composition")
        #expect(try await cache.get("k") == "NEW")
        await redis.shutdown(); await server.kill()
    }

    @Test func twoIndependentLevelsOnOnePrefixInvalidateEachOther() async throws {
        let server = try await RedisServer()
        let redisA = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv7:")
        let redisB = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv7:")
        let memoryA = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let memoryB = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cacheA = memoryA + redisA, cacheB = memoryB + redisB
        #expect(await poll { redisA.isReceivingInvalidations && redisB.isReceivingInvalidations })
        try await settled(redisB, "k") { try await cacheA.set("v1", forKey: "k") }
        #expect(try await cacheB.get("k") == "v1")
        await cacheB.waitForPendingWrites()
        #expect(try await memoryB.getIfPresent("k") == "v1")

        try await cacheA.set("v2", forKey: "k")
        #expect(try await poll { try await memoryB.getIfPresent("k") == nil }, "B's memory dropped A's key")
        #expect(try await cacheB.get("k") == "v2")
        try await cacheA.remove("k")
        #expect(try await poll { try await cacheB.getIfPresent("k") == nil }, "and a remove")
        await redisA.shutdown(); await redisB.shutdown(); await server.kill()
    }

    @Test func oneLevelUnderTwoCompositionsTellsEachOfTheOthersWrites() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv8:")
        let memoryA = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let memoryB = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cacheA = memoryA + redis, cacheB = memoryB + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await settled(redis, "k") { try await cacheA.set("v1", forKey: "k") }
        #expect(try await cacheB.get("k") == "v1")
        await cacheB.waitForPendingWrites()
        try await cacheA.set("v2", forKey: "k")
        #expect(try await poll { try await memoryB.getIfPresent("k") == nil }, "no NOLOOP: this process's writes are reported too")
        #expect(try await cacheB.get("k") == "v2")
        await redis.shutdown(); await server.kill()
    }

    /// A composition read right after it is made waits (briefly) for the
    /// level's subscription instead of racing it: no flush at start-up, and
    /// the read's back-fills are not dropped (one origin read, not two).
    @Test func aReadAtStartUpWaitsForTheSubscriptionAndKeepsItsBackfills() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv10:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let originReads = Atomic<Int>(0)
        let cache = memory + redis + BasicFetcher<String, String> { key in
            originReads.add(1, ordering: .relaxed)
            return "origin:\(key)"
        }
        #expect(try await cache.get("k") == "origin:k")
        await cache.waitForPendingWrites()
        #expect(redis.nearCacheFlushes == 0, "the read came before the subscription and was flushed for")
        #expect(try await redis.getIfPresent("k") == "origin:k", "back-filled into Redis")
        #expect(try await cache.get("k") == "origin:k")
        #expect(originReads.load(ordering: .relaxed) == 1)
        await redis.shutdown(); await server.kill()
    }

    /// The start-up wait is bounded: with the server stopped the
    /// subscription never comes, and a read still falls through to the
    /// origin (after the wait, and its own command timeout).
    @Test func theStartUpWaitIsBoundedWhenTheSubscriptionNeverComes() async throws {
        let server = try await RedisServer()
        kill(server.process.processIdentifier, SIGSTOP)
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv11:", commandTimeout: .milliseconds(500))
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + redis + BasicFetcher<String, String> { "origin:\($0)" }
        let start = ContinuousClock.now
        #expect(try await cache.get("k") == "origin:k")
        #expect(ContinuousClock.now - start < .seconds(10), "the read waited on the subscription")
        #expect(!redis.isReceivingInvalidations)
        kill(server.process.processIdentifier, SIGCONT)
        await redis.shutdown(); await server.kill()
    }

    @Test func aLevelUsedBeforeItSubscribedFlushesAboveOnceSubscribed() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv9:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        try await memory.set("maybe stale", forKey: "k")
        try await redis.set("v", forKey: "k")  // nobody listened to Redis then
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        #expect(redis.nearCacheFlushes == 1)
        #expect(try await memory.getIfPresent("k") == nil)
        #expect(try await cache.get("k") == "v")
        await redis.shutdown(); await server.kill()
    }

    @Test func pushFramesBetweenRepliesGoToThePushStreamAndTakeNoReply() async throws {
        let (pushes, continuation) = AsyncStream<RESPValue>.makeStream()
        let channel = EmbeddedChannel()
        let queue = RedisRequestQueue(channel: channel, timeout: nil)
        try channel.pipeline.syncOperations.addHandler(RedisCommandHandler(queue: queue))
        try channel.pipeline.syncOperations.addHandler(RedisPushHandler(continuation))
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 6379)).get()
        let slots = (0..<2).map { _ in PendingReply(channel.eventLoop) }
        for slot in slots {
            var bytes = ByteBuffer()
            RESPEncoder.encode([Array("PING".utf8)], into: &bytes)
            queue.submit(bytes, replies: [slot.replies])
        }
        try channel.writeInbound(ByteBuffer(string: ">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\np:a\r\n+PONG\r\n"
                                                + ">2\r\n$10\r\ninvalidate\r\n_\r\n:2\r\n"))
        #expect(try await slots[0].future.get() == .simpleString("PONG"))
        #expect(try await slots[1].future.get() == .integer(2))
        _ = try? await channel.close()
        var received: [CacheInvalidation<[UInt8]>] = []
        for await push in pushes { received += RedisInvalidationSubscriber.invalidations(in: push) }
        #expect(received == [.key(Array("p:a".utf8)), .all], "the stream ends when the connection closes")
    }

    @Test func aPushThatDoesNotFitTheBacklogClosesTheConnection() async throws {
        let (pushes, continuation) = AsyncStream<RESPValue>.makeStream(bufferingPolicy: .bufferingOldest(1))
        defer { withExtendedLifetime(pushes) {} }
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(RedisPushHandler(continuation))
        try await channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 6379)).get()
        try channel.writeInbound(RESPValue.push([.bulkString(ByteBuffer(string: "invalidate")), .null]))
        #expect(channel.isActive)
        try channel.writeInbound(RESPValue.push([.bulkString(ByteBuffer(string: "invalidate")), .null]))
        #expect(!channel.isActive, "a lost push would be a missed invalidation: closed instead")
    }

    @Test func invalidatePushesMapToKeysOrEverything() throws {
        func push(_ payload: RESPValue) -> RESPValue { .push([.bulkString(ByteBuffer(string: "invalidate")), payload]) }
        let keys = RedisInvalidationSubscriber.invalidations(in: push(.array([.bulkString(ByteBuffer(string: "p:a")),
                                                                            .bulkString(ByteBuffer(string: "p:b"))])))
        #expect(keys == [.key(Array("p:a".utf8)), .key(Array("p:b".utf8))])
        #expect(RedisInvalidationSubscriber.invalidations(in: push(.null)) == [.all])
        #expect(RedisInvalidationSubscriber.invalidations(in: .push([.bulkString(ByteBuffer(string: "message")), .null])).isEmpty)
        #expect(RedisInvalidationSubscriber.invalidations(in: .array([.bulkString(ByteBuffer(string: "invalidate")), .null])).isEmpty)

        let prefix = Array("app:".utf8)
        #expect(RedisKeyLayout.escaped.keyBytes(Array("app:user%3A7".utf8), prefix: prefix) == Array("user:7".utf8))
        #expect(RedisKeyLayout.escaped.keyBytes(Array("app:50%25%3Aa".utf8), prefix: prefix) == Array("50%:a".utf8))
        #expect(RedisKeyLayout.escaped.keyBytes(Array("app:x:1".utf8), prefix: prefix) == nil, "a key of app:x:")
        #expect(RedisKeyLayout.escaped.keyBytes(Array("app:bad%2".utf8), prefix: prefix) == nil)
        #expect(RedisKeyLayout.escaped.keyBytes(Array("app:bad%41".utf8), prefix: prefix) == nil)
        #expect(RedisKeyLayout.escaped.keyBytes(Array("apple".utf8), prefix: prefix) == nil)
        for key in ["", "plain", "a:b", "%", "%3A", "::%%", "é:ü"] {
            let bytes = Array(key.utf8)
            #expect(RedisKeyLayout.escaped.keyBytes(prefix + RedisKeyLayout.percentEscaped(bytes), prefix: prefix) == bytes, "\(key)")
        }
    }
}

/// `memory + redis + origin` where another process writes the key while
/// this one reads the origin: the origin's older answer never lands in
/// Redis (where every process would be served it) or in memory.
extension RedisInvalidationTests {
    @Test func aBackfillIntoRedisNeverOverwritesAValueWrittenSinceItsReadBegan() async throws {
        let server = try await RedisServer()
        // No invalidations: what is tested is Redis declining the back-fill (SET NX), not the push.
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "bf1:", invalidatesLevelsAbove: false)
        let other = try RedisCacheLevel<String, String>(url: server.url, prefix: "bf1:", invalidatesLevelsAbove: false)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let origin = SnapshotOrigin()
        try await origin.set("old", forKey: "k")
        let cache = memory + redis + origin
        let read = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 1 }, "the read reached the origin")
        try await origin.set("new", forKey: "k")
        try await other.set("new", forKey: "k")  // another process, after this one's read missed Redis
        origin.open()
        #expect(try await read.value == "old")  // the answer of a read that began before the change
        await cache.waitForPendingWrites()
        #expect(try await other.getIfPresent("k") == "new", "the back-fill overwrote a newer value in Redis")
        #expect(memory.value(forKey: "k") == nil, "memory kept a value Redis declined")
        #expect(cache.backfillsSkipped == 1 && cache.backfillFailures == 0)
        #expect(try await cache.getIfPresent("k") == "new")
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }

    /// The key is written and then removed elsewhere while the origin read
    /// is in flight: Redis is empty again, so only the invalidations heard
    /// meanwhile can stop the back-fill of the older answer.
    @Test func aBackfillIntoRedisIsDroppedAfterItHearsTheKeyChangedElsewhere() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "bf2:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let origin = SnapshotOrigin()
        try await origin.set("old", forKey: "k")
        let cache = memory + redis + origin
        let heard = listen(redis)
        #expect(await poll { redis.isReceivingInvalidations })
        let read = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 1 }, "the read reached the origin")
        try await origin.set("new", forKey: "k")
        #expect(try await redisCLI(server, "SET", "bf2:k", "new").contains("OK"))
        #expect(try await redisCLI(server, "DEL", "bf2:k").contains("1"))
        #expect(await poll { heard.count(.key("k")) >= 2 }, "both changes heard: \(heard.all)")
        origin.open()
        #expect(try await read.value == "old")
        await cache.waitForPendingWrites()
        #expect(try await redisCLI(server, "EXISTS", "bf2:k").contains("0"), "the older answer was written into Redis")
        #expect(memory.value(forKey: "k") == nil, "the older answer was written into memory")
        #expect(try await cache.getIfPresent("k") == "new")
        await redis.shutdown(); await server.kill()
    }
}

/// The cache-aside race across processes: this process reads the origin,
/// the data changes and another process removes the key (or clears the
/// level), then this process's back-fill would write the old answer into
/// Redis for every process. A remove or clear leaves a tombstone with the
/// server's time; a back-fill of a read that missed before it is declined.
/// Invalidations are off: the tombstone alone is what is tested.
extension RedisInvalidationTests {
    func raceSetup(_ server: RedisServer, prefix: String) throws
        -> (cache: ComposedCache<ComposedCache<MemoryCacheLevel<String, String>, RedisCacheLevel<String, String>>, SnapshotOrigin>,
            memory: MemoryCacheLevel<String, String>, redis: RedisCacheLevel<String, String>,
            other: RedisCacheLevel<String, String>, origin: SnapshotOrigin) {
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: prefix, invalidatesLevelsAbove: false)
        let other = try RedisCacheLevel<String, String>(url: server.url, prefix: prefix, invalidatesLevelsAbove: false)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let origin = SnapshotOrigin()
        return (memory + redis + origin, memory, redis, other, origin)
    }

    @Test(arguments: [false, true])
    func aBackfillOfAReadFromBeforeARemoveOrClearElsewhereIsDeclined(clear: Bool) async throws {
        let server = try await RedisServer()
        let (cache, memory, redis, other, origin) = try raceSetup(server, prefix: clear ? "race-c:" : "race-r:")
        try await origin.set("old", forKey: "k")
        let read = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 1 }, "the read missed Redis and reached the origin")
        try await origin.set("new", forKey: "k")  // the data changes…
        if clear { await other.clear() } else { try await other.remove("k") }  // …and another process invalidates it
        origin.open()
        #expect(try await read.value == "old")
        await cache.waitForPendingWrites()
        #expect(try await other.getIfPresent("k") == nil, "the old answer was written into Redis")
        #expect(memory.value(forKey: "k") == nil, "the old answer was written into memory")
        // A read that begins after the remove (past the margin: time itself is
        // what is tested) back-fills as usual.
        try await Task.sleep(for: RedisCacheLevel<String, String>.backfillMargin + .milliseconds(100))
        #expect(try await cache.getIfPresent("k") == "new")
        await cache.waitForPendingWrites()
        #expect(try await other.getIfPresent("k") == "new", "a read after the remove was not back-filled")
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }

    @Test func aRemoveBeforeTheReadDoesNotStopItsBackfill() async throws {
        let server = try await RedisServer()
        let (cache, memory, redis, other, origin) = try raceSetup(server, prefix: "race-b:")
        try await other.remove("k")
        try await Task.sleep(for: RedisCacheLevel<String, String>.backfillMargin + .milliseconds(100))
        origin.open()
        try await origin.set("v", forKey: "k")
        #expect(try await cache.getIfPresent("k") == "v")
        await cache.waitForPendingWrites()
        #expect(try await other.getIfPresent("k") == "v")
        #expect(memory.value(forKey: "k") == "v")
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }
    /// `memory + disk + redis` built per request over long-lived levels (a
    /// real disk level and a real Redis server): each request's stack goes
    /// with its subscriptions (the Redis level keeps none; 100 before), and
    /// the levels above forget what nothing keeps coherent any more
    /// (``CacheLevel/lostCoherence()``), so a change another client makes
    /// between requests is never served stale.
    @Test func aThreeLevelStackBuiltPerRequestLeavesNoListenerAndServesNothingStale() async throws {
        let server = try await RedisServer()
        let directory = TemporaryDirectory("redis-inv")
        defer { directory.remove() }
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "inv9:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let disk = try DiskCacheLevel<String, String>(directory: directory.url, capacity: 1 << 20)
        try await redis.set("old", forKey: "k")
        for _ in 0..<100 {
            let cache = memory + disk + redis
            #expect(try await cache.get("k") == "old")
            await cache.waitForPendingWrites()
        }
        #expect(await poll { redis.listeners.count == 0 }, "\(redis.listeners.count) listeners on the Redis level")
        #expect(try await memory.getIfPresent("k") == nil)
        #expect(try await disk.getIfPresent("k") == nil, "the disk entry was written while a stack kept it coherent")
        try await redisCLI(server, "SET", "inv9:k", "new")
        #expect(try await (memory + disk + redis).get("k") == "new")
        await redis.shutdown(); await server.kill()
    }
}
