import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// A string codec whose `hold`th encode of `held` blocks until `release()`
/// (a gate inside the replay task: the codec is synchronous).
final class HeldCodec: Sendable {
    let held: String
    let hold: Int
    private let encodes = Atomic<Int>(0)
    private let isReached = Atomic<Bool>(false)
    private let gate = DispatchSemaphore(value: 0)

    init(held: String, hold: Int) { self.held = held; self.hold = hold }

    var reached: Bool { isReached.load(ordering: .relaxed) }
    func release() { gate.signal() }

    var codec: CacheCodec<String> {
        CacheCodec(name: "held", encode: { [self] value in
            if value == held, encodes.add(1, ordering: .relaxed).newValue == hold {
                isReached.store(true, ordering: .relaxed)
                _ = gate.wait(timeout: .now() + 20)  // a deadline, never an endless hang
            }
            return Data(value.utf8)
        }, decode: { String(decoding: $0, as: UTF8.self) })
    }
}

final class WeakLevel: @unchecked Sendable {
    weak var level: AnyObject?
}

@Suite(.serialized) struct RedisReviewEightTests {
    func fence(_ server: RedisServer, _ redis: RedisCacheLevel<String, String>, prefix: String) async throws {
        try await OwnWriteReportTests().fence(server, redis, prefix: prefix)
    }

    /// A back-fill whose script never ran (its task was cancelled after the
    /// record was made, before the send) leaves its record in
    /// `RedisScriptEchoes`. Much later, this process writes "Z" (not
    /// reported back: NOLOOP), and another client writes "X", the bytes of
    /// the stale record: the report is checked against the stale record,
    /// Redis holds "X", and the report is swallowed. The memory level keeps
    /// "Z", which Redis no longer holds, for good.
    @Test func aStaleEchoRecordSwallowsAnotherClientsWrite() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "rv8a:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations })

        let gate = Gate()
        let task = Task {
            await gate.wait()
            try await redis.backfill(Backfill(value: "X", expiresAt: nil, readStartedAt: .now), forKey: "k")
        }
        task.cancel()
        gate.open()
        _ = await task.result
        #expect(try await redis.getIfPresent("k") == nil, "the cancelled back-fill wrote nothing")

        try await cache.set("Z", forKey: "k")
        #expect(try await memory.getIfPresent("k") == "Z")
        _ = try await redisCLI(server, "SET", "rv8a:k", "X")  // another client
        try await fence(server, redis, prefix: "rv8a:")
        #expect(try await redis.getIfPresent("k") == "X", "Redis holds the other client's value")
        #expect(try await poll { try await memory.getIfPresent("k") != "Z" },
                "the memory level still answers Z, which another client overwrote in Redis")
        await redis.shutdown(); await server.kill()
    }

    /// A write kept during an outage is taken for replay; while the replay
    /// is under way (held in the codec before it writes an earlier key),
    /// the application writes the same key again, and that write lands at
    /// once (Redis is back). The replay then writes the older value over it.
    @Test func aReplayDoesNotOverwriteANewerWriteThatLandedMeanwhile() async throws {
        let server = try await RedisServer()
        let held = HeldCodec(held: "held", hold: 2)
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "rv8b:", codec: held.codec,
                                                        commandTimeout: .milliseconds(300), outageBacklog: 100)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        await server.kill()
        try await redis.set("held", forKey: "a")  // encode 1
        try await cache.set("v1", forKey: "k")
        #expect(redis.writesAwaitingReplay == 2)

        try await server.restart()
        #expect(await poll(timeout: .seconds(20)) { held.reached }, "the replay took the backlog and holds in a's encode")
        try await cache.set("v2", forKey: "k")  // Redis is back, but writes wait behind the backlog (order per key)
        #expect(try await redis.getIfPresent("k") == "v2", "the writer reads its write before it lands")
        held.release()
        #expect(await poll(timeout: .seconds(20)) { redis.writesAwaitingReplay == 0 })
        let final = try await redisCLI(server, "GET", "rv8b:k")
        #expect(final == "v2\n", "the replay wrote the older v1 over v2: Redis holds \(final)")
        #expect(try await cache.get("k") == "v2", "the writer's own cache answers the overwritten value")
        await redis.shutdown(); await server.kill()
    }

    /// set k, then (Redis down again while a replay is in flight) a clear:
    /// the clear voids the set. The replay fails and puts the set back after
    /// the clear kept meanwhile, so once Redis is back, k holds v1 again.
    @Test func aClearKeptWhileAReplayIsInFlightVoidsTheWritesPutBack() async throws {
        let server = try await RedisServer()
        let held = HeldCodec(held: "held", hold: 2)
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "rv8c:", codec: held.codec,
                                                        commandTimeout: .milliseconds(300), outageBacklog: 100)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        await server.kill()
        try await redis.set("held", forKey: "a")  // encode 1
        try await cache.set("v1", forKey: "k")

        try await server.restart()
        #expect(await poll(timeout: .seconds(20)) { held.reached }, "the replay took the backlog and holds in a's encode")
        await server.kill()
        await cache.clear()  // kept: Redis is down
        #expect(try await memory.getIfPresent("k") == nil)
        held.release()  // the replay of a and k fails; both are put back
        try await server.restart()
        #expect(await poll(timeout: .seconds(30)) { redis.writesAwaitingReplay == 0 }, "pending \(redis.writesAwaitingReplay)")
        let final = try await redisCLI(server, "GET", "rv8c:k")
        #expect(final == "\n", "a value cleared after it was set came back: Redis holds \(final)")
        #expect((try? await cache.get("k")) == nil, "the cleared value comes back through the writer's cache")
        await redis.shutdown(); await server.kill()
    }

    /// A level shut down while writes await replay: the replay task holds
    /// the level (`self?.replayWhenReachable()` keeps it strong for the whole
    /// loop) and probes forever; the level is never freed.
    @Test func aLevelShutDownWithWritesAwaitingReplayIsReleased() async throws {
        let server = try await RedisServer()
        let control = WeakLevel(), backlogged = WeakLevel()
        do {
            let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "rv8d:", codec: .string,
                                                            commandTimeout: .milliseconds(300))
            control.level = redis
            await redis.shutdown()
        }
        do {
            let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "rv8e:", codec: .string,
                                                            commandTimeout: .milliseconds(300), outageBacklog: 10)
            backlogged.level = redis
            await server.kill()
            try await redis.set("v", forKey: "k")
            #expect(redis.writesAwaitingReplay == 1)
            // Let the replay task begin its probes (its first pause is 50 ms).
            let probing = ContinuousClock.now + .milliseconds(300)
            while ContinuousClock.now < probing { await Task.yield() }
            await redis.shutdown()
        }
        #expect(await poll { control.level == nil }, "a level without a backlog is freed")
        #expect(await poll(timeout: .seconds(10)) { backlogged.level == nil },
                "the replay task keeps the shut-down level (and its client) alive, probing forever")
    }

    /// A distributed load whose caller is cancelled while the loader runs:
    /// the unlock goes through a cancellable `client.send`, which sends
    /// nothing once the task is cancelled, so the lock stays for its whole
    /// `PX` (the timeout) and every other process waits on it that long,
    /// then all load at once. (The back-fill is not sent either.)
    @Test func aCancelledDistributedLoadReleasesItsLock() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "rv8f:")
        let entered = Gate(), finish = Gate()
        let load = redis.distributedLoad(ttl: nil, timeout: .seconds(60)) { key in
            entered.open()
            await finish.wait()
            return "loaded \(key)"
        }
        let task = Task { try await load("k") }
        await entered.wait()
        #expect(try await redisCLI(server, "EXISTS", "strata-lock:rv8f:k") == "1\n", "the lock is held while loading")
        task.cancel()
        finish.open()
        _ = await task.result
        let released = try await poll(timeout: .seconds(3)) { try await redisCLI(server, "EXISTS", "strata-lock:rv8f:k") == "0\n" }
        let pttl = try await redisCLI(server, "PTTL", "strata-lock:rv8f:k")
        #expect(released, "the cancelled load left its lock behind (PTTL \(pttl))")
        await redis.shutdown(); await server.kill()
    }
}
