import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Own writes that Redis no longer reports back (`NOLOOP`), in the cases
/// where the level's own report is not enough: a write that fails, and a
/// write whose caller is cancelled while Redis has yet to run it.
@Suite(.serialized) struct OwnWriteReportRaceTests {
    struct Unencodable: Error {}

    /// UTF-8, except that "bad" does not encode (also RedisFailedEncodeTests').
    static let picky = CacheCodec<String>(
        name: "picky",
        encode: { value in
            guard value != "bad" else { throw Unencodable() }
            return Data(value.utf8)
        },
        decode: { String(decoding: $0, as: UTF8.self) })

    /// Waits until Redis has reported a change `redis-cli` makes now (every
    /// report of an earlier change has been handled by then), then lets the
    /// level's own reports (tasks) run.
    func settle(_ server: RedisServer, _ redis: RedisCacheLevel<String, String>, prefix: String) async throws {
        let received = redis.invalidationsReceived
        _ = try await redisCLI(server, "SET", prefix + "fence", "x")
        #expect(await poll { redis.invalidationsReceived > received }, "the fence's invalidation")
        try await Task.sleep(for: .milliseconds(300))
    }

    /// A set through `memory + redis` whose Redis part fails (here: the value
    /// does not encode, so the level deletes the key's old value; a server
    /// error such as OOM does the same through the composition's clean-up
    /// remove). Redis ends up without the key, the memory level with the
    /// value of the failed set. Before NOLOOP the clean-up `DEL` was reported
    /// back and dropped it; now the level reports it with the writer's origin
    /// and the writer skips it: this process answers "bad" for good, every
    /// other process a miss.
    @Test func aFailedSetLeavesNoValueAboveThatRedisDoesNotHold() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "ownf1:", codec: Self.picky)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await cache.set("old", forKey: "k")
        await #expect(throws: (any Error).self) { try await cache.set("bad", forKey: "k") }
        try await settle(server, redis, prefix: "ownf1:")
        let below = try await redis.getIfPresent("k")
        let above = try await memory.getIfPresent("k")
        #expect(below == nil, "the failed set removed Redis's value")
        #expect(above == below, "memory holds \(String(describing: above)), Redis \(String(describing: below))")
        await redis.shutdown(); await server.kill()
    }

    /// The same with a server error: Redis over its memory limit refuses the
    /// `SET` (OOM) but runs the clean-up `DEL`.
    @Test func aSetRefusedByRedisLeavesNoValueAboveThatRedisDoesNotHold() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "ownf2:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await cache.set("old", forKey: "k")
        _ = try await redisCLI(server, "CONFIG", "SET", "maxmemory", "1")
        await #expect(throws: (any Error).self) { try await cache.set("new", forKey: "k") }
        _ = try await redisCLI(server, "CONFIG", "SET", "maxmemory", "0")
        try await settle(server, redis, prefix: "ownf2:")
        let below = try await redis.getIfPresent("k")
        let above = try await memory.getIfPresent("k")
        #expect(above == below, "memory holds \(String(describing: above)), Redis \(String(describing: below))")
        await redis.shutdown(); await server.kill()
    }

    /// Two compositions over one level. A's set is sent on the tracking
    /// connection, then A's caller is cancelled before Redis has run it: the
    /// set throws `CancellationError` at once and the level reports the write
    /// to B straight away. B drops "old", reads again, and Redis, which has
    /// not run the `SET` yet, gives it "old" again, which B back-fills. Then
    /// Redis runs the `SET`; `NOLOOP` keeps it from being reported: B serves
    /// the overwritten "old" for good.
    ///
    /// Redis runs the `SET` late here because a `BLPOP` ahead of it on the
    /// tracking connection blocks that client for a second (a stand-in for
    /// any delay of a command already sent: a long pipeline, the network).
    @Test(arguments: ["set", "remove"])
    func aCancelledWriteThatLandsAfterItsReportLeavesAnotherCompositionStale(_ operation: String) async throws {
        let server = try await RedisServer()
        let prefix = "ownc\(operation):"
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: prefix)
        let memoryA = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let memoryB = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cacheA = memoryA + redis, cacheB = memoryB + redis
        #expect(await poll { redis.isReceivingInvalidations })
        try await cacheA.set("old", forKey: "k")
        #expect(await poll { cacheB.invalidationsApplied == 1 })
        #expect(try await poll {
            guard try await cacheB.get("k") == "old" else { return false }
            await cacheB.waitForPendingWrites()
            return try await memoryB.getIfPresent("k") == "old"
        }, "B holds 'old'")

        let tracking = try #require(redis.subscriber?.writeConnection)
        let blocker = Task { try await tracking.send([Array("BLPOP".utf8), Array("blocker".utf8), Array("1".utf8)]) }
        #expect(try await poll { try await Self.blockedQueryBuffer(server) == 0 }, "the connection is blocked in BLPOP")
        let writer = Task {
            if operation == "set" { try await cacheA.set("new", forKey: "k") } else { try await cacheA.remove("k") }
        }
        // Sent: its bytes wait in the blocked connection's query buffer.
        #expect(try await poll { try await (Self.blockedQueryBuffer(server) ?? 0) > 0 }, "A's write was sent")
        writer.cancel()
        _ = await writer.result
        #expect(await poll { cacheB.invalidationsApplied >= 2 }, "A's report reached B")
        #expect(try await poll { try await memoryB.getIfPresent("k") == nil })
        // B reads again meanwhile (a request it serves).
        _ = try? await cacheB.get("k")
        await cacheB.waitForPendingWrites()

        _ = try? await blocker.value
        try await settle(server, redis, prefix: prefix)
        let below = try await redis.getIfPresent("k")
        #expect(below == (operation == "set" ? "new" : nil), "Redis ran A's write")
        let above = try await memoryB.getIfPresent("k")
        #expect(above == nil || above == below, "B holds \(String(describing: above)), Redis \(String(describing: below))")
        await redis.shutdown(); await server.kill()
    }
    /// The query buffer (bytes received, not yet run) of the connection
    /// blocked in `BLPOP`; `nil` while none is.
    static func blockedQueryBuffer(_ server: RedisServer) async throws -> Int? {
        let blocked = try await redisCLI(server, "CLIENT", "LIST").split(separator: "\n").first { $0.contains(" cmd=blpop ") }
        guard let field = blocked?.split(separator: " ").first(where: { $0.hasPrefix("qbuf=") }) else { return nil }
        return Int(field.dropFirst("qbuf=".count))
    }

    /// The level's report of a write runs in a task of its own, which
    /// inherits the writing request's task-locals: its trace (and back-fill
    /// flag). Another composition's drop of the key, made in that task, is
    /// then recorded as part of the writer's request (it was a push, handled
    /// on the subscriber's task, before NOLOOP).
    @Test func anotherCompositionsDropIsNotPartOfTheWritersTrace() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "ownt:")
        let memoryA = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "a")
        let memoryB = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "b")
        let cacheA = memoryA + redis, cacheB = memoryB + redis
        #expect(await poll { redis.isReceivingInvalidations })
        let trace = RequestTrace()
        try await trace.record { try await cacheA.set("v", forKey: "k") }
        #expect(await poll { cacheB.invalidationsApplied == 1 })
        try await Task.sleep(for: .milliseconds(100))
        let foreign = trace.events.filter { $0.level == "b" }
        #expect(foreign.isEmpty, "B's drop recorded in A's set: \(foreign)")
        await redis.shutdown(); await server.kill()
    }
    /// The same as a failed set, with the failure in a wrapper between the
    /// memory level and Redis: a value transformation whose inverse throws.
    /// The wrapper removes Redis's old value (and the composition does so
    /// again); both removes succeed, so the level reports them with the
    /// writer's origin, and the writer keeps "bad", which Redis never held.
    @Test func aSetFailingInAWrapperAboveRedisLeavesNoValueAboveThatRedisDoesNotHold() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "ownf3:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let checked = ValueTransformedCache<RedisCacheLevel<String, String>, String>(
            redis, transform: { _, value in value },
            inverseTransform: { _, value in
                guard value != "bad" else { throw Unencodable() }
                return value
            })
        let cache = memory + checked
        #expect(await poll { redis.isReceivingInvalidations })
        try await cache.set("old", forKey: "k")
        await #expect(throws: (any Error).self) { try await cache.set("bad", forKey: "k") }
        try await settle(server, redis, prefix: "ownf3:")
        let below = try await redis.getIfPresent("k")
        let above = try await memory.getIfPresent("k")
        #expect(below == nil, "the failed set removed Redis's value")
        #expect(above == below, "memory holds \(String(describing: above)), Redis \(String(describing: below))")
        await redis.shutdown(); await server.kill()
    }
    /// A set while Redis is down changed nothing there: the writer keeps
    /// what it wrote (as before NOLOOP), so the fix above does not empty the
    /// memory level through an outage. (When Redis is back the level flushes
    /// the levels above once it subscribes again, having been used meanwhile.)
    @Test func aSetWhileRedisIsDownLeavesTheWritersValueAbove() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "ownd:", commandTimeout: .milliseconds(300))
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })
        await server.kill()
        // The loss is noticed (and flushed above) first.
        #expect(await poll { !redis.isReceivingInvalidations && redis.nearCacheFlushes == 1 })
        try await Task.sleep(for: .milliseconds(100))
        await #expect(throws: (any Error).self) { try await cache.set("v", forKey: "k") }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await memory.getIfPresent("k") == "v")
        await redis.shutdown()
    }
}
