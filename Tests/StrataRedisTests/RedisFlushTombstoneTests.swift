import Foundation
import Strata
import StrataRedis
import StrataTestSupport
import Testing

/// A `FLUSHALL` (or a restart without persistence) empties Redis of the
/// tombstones too. A load whose read began before another process's remove
/// must still not land once they are gone: what was removed before is
/// unknown then. Here over a level without tracking
/// (`invalidatesLevelsAbove: false`: only `SET NX` and the tombstones guard
/// its back-fills); the remove is made by a real second process
/// (`StrataRedisWorker`, `memory + redis`). A known issue, not closed yet:
/// an epoch key of the database, checked by the back-fill script (none, or
/// one later than the read, declines), would close it, if made without
/// turning a miss into a write (a miss under `CLIENT PAUSE WRITE` waited).
@Suite(.serialized) struct RedisFlushTombstoneTests {
    typealias Worker = RedisMultiProcessTests.Worker

    /// A loader that waits at a gate before answering the origin's old value.
    final class GatedLoader: Sendable {
        let gate = Gate()
        let calls = Counter()
        func load(_ key: String) async throws -> String {
            calls.increment()
            await gate.wait()
            return "old"
        }
    }

    /// Loads `k` through `redis + loader` while the worker removes it and
    /// `emptyRedis` runs; then Redis must not hold the old value.
    func loadAcrossARemoveAnd(_ emptyRedis: (RedisServer) async throws -> Void) async throws {
        let server = try await RedisServer()
        let prefix = "flush:"
        let worker = try Worker(url: server.url, prefix: prefix)
        defer { worker.process.terminate() }
        #expect(await poll(timeout: .seconds(20)) { worker.output.contains("ready") }, "worker subscribed")
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: prefix, invalidatesLevelsAbove: false)
        let stack = redis.stacked()
        let loader = GatedLoader()
        let get = Task { try await stack.get("k", ttl: .seconds(60), load: loader.load) }
        #expect(await poll { loader.calls.value == 1 }, "the load began")
        // Another process changed the origin and removes the key.
        #expect(await worker.ask("remove k") == "done remove k")
        try await emptyRedis(server)
        loader.gate.open()
        #expect(try await get.value == "old", "the get overlapped the remove: its answer stands")
        await stack.waitForPendingWrites()
        let raw = RedisClient(configuration: try RedisConfiguration(url: server.url))
        // Known issue (not fixed): nothing tells an emptied Redis from one with no tombstones.
        let landed = try await raw.send("GET", prefix + "k")
        let answered = await worker.ask("get k")
        withKnownIssue("a flush or restart takes the remove's tombstone: the load's back-fill lands the removed value") {
            #expect(landed == .bulkString(nil), "the removed value landed in Redis")
            #expect(answered == "miss k", "another process reads the removed value")
        }
        await raw.shutdown()
        await redis.shutdown()
        await worker.stop()
        await server.kill()
    }

    @Test func aLoadInFlightAcrossARemoveAndAFlushallDoesNotLand() async throws {
        try await loadAcrossARemoveAnd { server in
            let raw = RedisClient(configuration: try RedisConfiguration(url: server.url))
            _ = try await raw.send("FLUSHALL")
            await raw.shutdown()
        }
    }

    @Test func aLoadInFlightAcrossARemoveAndARestartWithoutPersistenceDoesNotLand() async throws {
        try await loadAcrossARemoveAnd { server in
            await server.kill()
            try await server.restart()
        }
    }
}
