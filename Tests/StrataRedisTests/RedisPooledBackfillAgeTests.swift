import Foundation
@testable import Strata
import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// Found while building `RedisDifferentialTests`: the cache-aside race the
/// tombstones close (a read of the old data, the data changes and the key is
/// removed, the read's answer is written back) stayed open through a pool. A
/// get that *joined* a pooled origin read begun before the remove back-filled
/// that read's answer with its own age, so the tombstone check compared the
/// remove with when the joining get began, not with when the shared read did,
/// and Redis took the old data for every process. Now a get that joins a
/// read in flight moves its composition's read start back to that read's
/// (`CacheContext.readStart`), and the back-fill is judged by it.
@Suite(.serialized) struct RedisPooledBackfillAgeTests {
    /// An origin whose read sees the data as it is when the read begins, and
    /// answers once `gate` opens.
    final class SlowOrigin: Fetcher {
        typealias Key = String
        typealias Value = String
        let generation = Mutex(0)
        let gate = Gate()
        let reads = Counter()
        var name: String { "origin" }
        func getIfPresent(_ key: String) async throws -> String? { try await entry(forKey: key)?.value }
        func entry(forKey key: String) async throws -> CacheEntry<String>? {
            let value = "\(key)-g\(generation.withLock { $0 })"
            reads.increment()
            await gate.wait()
            return CacheEntry(value: value)
        }
    }

    @Test func aGetJoiningAPooledReadBegunBeforeACacheAsideRemoveDoesNotWriteItsAnswerBack() async throws {
        let server = try await RedisServer()
        let origin = SlowOrigin()
        let pooled = origin.pooled()
        // A does not hear of B's remove (no tracking): its second get joins the read in
        // flight, and only the tombstone stands between that read's answer and Redis. (A
        // process that hears of the remove does not let a later get join: see
        // ``aGetArrivingAfterAReportedChangeDoesNotJoinAPooledReadBegunBefore()``.)
        let redisA = try RedisCacheLevel<String, String>(url: server.url, prefix: "pool:", invalidatesLevelsAbove: false)
        let memoryA = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cacheA = memoryA + redisA + pooled  // the README's `memory + shared + origin.pooled()`
        let redisB = try RedisCacheLevel<String, String>(url: server.url, prefix: "pool:")
        let cacheB = MemoryCacheLevel<String, String>(capacity: 1 << 20) + redisB
        #expect(await poll { redisB.isReceivingInvalidations })

        // A get through A misses memory and Redis and reads the origin: generation 0, held there.
        let first = Task { try await cacheA.get("k") }
        #expect(await poll { origin.reads.value == 1 })
        // The data changes and the application removes the key (cache-aside), here through B.
        origin.generation.withLock { $0 = 1 }
        try await cacheB.remove("k")
        // Later than the tombstone's margin (250 ms; the time passing is the condition tested),
        // another get through A arrives and joins the pooled read in flight.
        try await Task.sleep(for: .milliseconds(400))
        let joinedBefore = cacheA.readsJoined
        let second = Task { try await cacheA.get("k") }
        // It joins the read in flight: the stack's own (single flight of its reads of the
        // pool), so only the first caller's read back-fills, judged by when that read began.
        #expect(await poll { cacheA.readsJoined > joinedBefore || pooled.waiterCount(for: "k") == 2 })
        origin.gate.open()
        #expect(try await first.value == "k-g0")
        let joined = try await second.value
        await cacheA.waitForPendingWrites()

        let raw = try RedisClient(url: server.url)
        var stored: String?
        if case .bulkString(let buffer?) = try await raw.send("GET", "pool:k") { stored = String(buffer: buffer) }
        // The joining get's own answer is the shared read's (single flight).
        #expect(joined == "k-g0")
        // But nothing read before the remove is written back: not into Redis (every process would be served it) …
        #expect(stored != "k-g0", "Redis holds the data from before the remove")
        #expect(cacheA.backfillsSkipped == 1, "declined: \(cacheA.backfillsStarted) started, \(cacheA.backfillFailures) failed")
        // … nor into A's memory; and every composition reads the new data.
        #expect(memoryA.value(forKey: "k") != "k-g0", "A's memory holds the data from before the remove")
        #expect(try await cacheB.getIfPresent("k") == nil)
        #expect(try await cacheA.get("k") == "k-g1")
        await raw.shutdown(); await redisA.shutdown(); await redisB.shutdown(); await server.kill()
    }
}

extension Result {
    var isFailure: Bool { if case .failure = self { true } else { false } }
}

extension RedisPooledBackfillAgeTests {
    /// The same race with leases and a writer that is not Strata (a plain
    /// `DEL`, no tombstone): the joining get placed a lease of its own after
    /// the `DEL`, but its answer comes from the read that began before, so
    /// its back-fill must look for the lease that read saw (gone with the
    /// `DEL`) and be declined.
    @Test func withLeasesAGetJoiningAPooledReadBegunBeforeAForeignDeleteDoesNotWriteItsAnswerBack() async throws {
        let server = try await RedisServer()
        let origin = SlowOrigin()
        let pooled = origin.pooled()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "pool-l:",
                                                         invalidatesLevelsAbove: false, leases: true)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis + pooled
        let raw = try RedisClient(url: server.url)

        let first = Task { try await cache.get("k") }
        #expect(await poll { origin.reads.value == 1 })
        origin.generation.withLock { $0 = 1 }
        _ = try await raw.send("DEL", "pool-l:k")  // the writer's cache-aside delete ends the first read's lease
        let joinedBefore = cache.readsJoined
        let second = Task { try await cache.get("k") }  // misses, leaves a new lease, joins the read in flight
        #expect(await poll { cache.readsJoined > joinedBefore || pooled.waiterCount(for: "k") == 2 })
        origin.gate.open()
        _ = await first.result
        #expect(try await second.value == "k-g0")
        await cache.waitForPendingWrites()
        var stored: String?
        if case .bulkString(let buffer?) = try await raw.send("GET", "pool-l:k") { stored = String(buffer: buffer) }
        #expect(stored != "k-g0", "Redis holds the data from before the delete")
        #expect(memory.value(forKey: "k") != "k-g0")
        #expect(try await cache.get("k") == "k-g1")
        await raw.shutdown(); await redis.shutdown(); await server.kill()
    }
}

extension RedisPooledBackfillAgeTests {
    /// Single flight and changes made elsewhere: once a process hears that
    /// a key changed in Redis (here the cache-aside writer's `DEL` of the
    /// lease the first read left, reported by tracking), a get of that key
    /// no longer joins a pooled origin read that began before the change; it
    /// reads the origin afresh and answers the new data. (Before, it joined
    /// and was answered with the old data: a get that began after the
    /// change, answered as if it had not happened.)
    @Test func aGetArrivingAfterAReportedChangeDoesNotJoinAPooledReadBegunBefore() async throws {
        let server = try await RedisServer()
        let origin = SlowOrigin()
        let pooled = origin.pooled()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "pool-j:", leases: true)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis + pooled
        let raw = try RedisClient(url: server.url)
        #expect(await poll { redis.isReceivingInvalidations })

        let first = Task { try await cache.get("k") }
        #expect(await poll { origin.reads.value == 1 })
        origin.generation.withLock { $0 = 1 }
        // Listeners hear a change in registration order: one registered after the
        // composition's hears it once the composition has applied it.
        let heard = Counter()
        let subscription = redis.subscribe { _ in heard.increment() }
        defer { subscription.cancel() }
        _ = try await raw.send("DEL", "pool-j:k")  // the writer's cache-aside delete, after the data changed
        #expect(await poll { heard.value > 0 }, "the process hears of the DEL")
        let second = Task { try await cache.get("k") }
        #expect(await poll { origin.reads.value == 2 }, "the second get reads the origin itself")
        #expect(pooled.waiterCount(for: "k") == 1, "and waits on its own read, not the first one's")
        origin.gate.open()
        #expect(try await first.value == "k-g0", "the first get began before the change")
        #expect(try await second.value == "k-g1", "the second began after the process heard of it")
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "k") != "k-g0")
        #expect(try await cache.get("k") == "k-g1")
        await raw.shutdown(); await redis.shutdown(); await server.kill()
    }
}

extension RedisPooledBackfillAgeTests {
    /// The same race through `values(forKey:)` (stale then fresh): its read
    /// of the lower level joins the pooled read in flight too, and its
    /// back-fill must be judged by that read's start. (It was judged by its
    /// own, after the remove's tombstone, and wrote the old data back.)
    @Test func aStreamJoiningAPooledReadBegunBeforeACacheAsideRemoveDoesNotWriteItsAnswerBack() async throws {
        let server = try await RedisServer()
        let origin = SlowOrigin()
        let pooled = origin.pooled()
        let redisA = try RedisCacheLevel<String, String>(url: server.url, prefix: "pool-s:", invalidatesLevelsAbove: false)
        let memoryA = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cacheA = memoryA + redisA + pooled
        let redisB = try RedisCacheLevel<String, String>(url: server.url, prefix: "pool-s:")
        let cacheB = MemoryCacheLevel<String, String>(capacity: 1 << 20) + redisB

        let first = Task { try await cacheA.get("k") }
        #expect(await poll { origin.reads.value == 1 })
        origin.generation.withLock { $0 = 1 }
        try await cacheB.remove("k")
        try await Task.sleep(for: .milliseconds(400))  // past the tombstone's margin: the time passing is the condition
        let stream = Task { () -> [String] in
            var values: [String] = []
            for try await reading in cacheA.values(forKey: "k") { values.append(reading.value) }
            return values
        }
        #expect(await poll { cacheA.readsJoined > 0 || pooled.waiterCount(for: "k") == 2 })
        origin.gate.open()
        _ = await first.result
        #expect(try await stream.value == ["k-g0"], "the stream's reading is the shared read's")
        await cacheA.waitForPendingWrites()
        let raw = try RedisClient(url: server.url)
        var stored: String?
        if case .bulkString(let buffer?) = try await raw.send("GET", "pool-s:k") { stored = String(buffer: buffer) }
        #expect(stored != "k-g0", "Redis holds the data from before the remove")
        #expect(memoryA.value(forKey: "k") != "k-g0")
        #expect(try await cacheA.get("k") == "k-g1")
        await raw.shutdown(); await redisA.shutdown(); await redisB.shutdown(); await server.kill()
    }
}
