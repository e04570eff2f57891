import Foundation
import NIOCore
import Strata
import StrataRedis
import StrataTestSupport
import Testing

/// A back-fill into Redis whose connection dies before the reply (its
/// outcome unknown) must not delete what another client wrote meanwhile.
///
/// Found by `RedisDifferentialTests` (seed 4, under load): in
/// `memory [+ disk] + redis + origin`, the origin's answer is back-filled
/// into `memory [+ disk] + redis`, a composition write whose Redis half (the
/// `SET NX` script) goes out on the tracking connection. A raw `CLIENT KILL`
/// of that connection failed it with `connectionClosed`, and the
/// composition's clean-up after a failed set then removed the key from Redis
/// (tombstone + `DEL`), deleting the raw `SET` that had landed meanwhile.
/// Redis then held nothing, so the composition kept answering (and
/// back-filling) the origin's value instead of the newer one.
@Suite struct RedisBackfillConnectionLossTests {
    /// `CLIENT LIST` lines of connections parked by `CLIENT PAUSE` (flag `b`).
    static func parked(_ lines: [String]) -> [String] {
        lines.filter { line in
            line.split(separator: " ").contains { $0.hasPrefix("flags=") && $0.dropFirst("flags=".count).contains("b") }
        }
    }

    @Test(arguments: [false, true])
    func aBackfillWhoseConnectionIsKilledLeavesAnotherClientsNewerValue(disk: Bool) async throws {
        let server = try await RedisServer()
        let prefix = "bfloss\(disk ? "d" : "m"):"
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: prefix)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let origin = BasicFetcher<String, String>(getIfPresent: { "origin-\($0)" })
        let directory = TemporaryDirectory("strata-bfloss")
        defer { directory.remove() }
        let cache: any CacheLevel<String, String>
        if disk {
            let diskLevel = try DiskCacheLevel<String, String>(name: "disk", directory: directory.url, capacity: 1 << 20)
            cache = memory + diskLevel + redis + origin
        } else {
            cache = memory + redis + origin
        }
        // Clients that are not Strata: one writes, one administers (a paused write holds its connection).
        let writer = try RedisClient(url: server.url)
        let admin = try RedisClient(url: server.url)
        #expect(await poll { redis.isReceivingInvalidations })
        let tracking = try await clientList(admin).first { $0.contains("name=strata-invalidation ") }
            .flatMap { $0.split(separator: " ").first { $0.hasPrefix("id=") }?.dropFirst(3) }.map(String.init)
        try #require(tracking != nil, "no tracking connection")

        // Redis runs no write from now on (reads still): the back-fill's script waits at the server.
        _ = try await admin.send("CLIENT", "PAUSE", "10000", "WRITE")
        #expect(try await cache.getIfPresent("k") == "origin-k")  // a miss: the back-fill is in flight
        let backfillParked = try await poll(timeout: .seconds(5)) {
            Self.parked(try await clientList(admin)).contains { $0.hasPrefix("id=\(tracking!) ") && $0.contains(" cmd=eval ") }
        }
        #expect(backfillParked, "the back-fill's script did not reach the server on the tracking connection")
        // Another client sets the key, queued behind the back-fill.
        let set = Task { try await writer.send("SET", prefix + "k", "newer") }
        #expect(try await poll(timeout: .seconds(5)) { Self.parked(try await clientList(admin)).count == 2 })
        // The tracking connection dies with the back-fill unanswered; the server resumes.
        _ = try await admin.send("CLIENT", "KILL", "ID", tracking!)
        _ = try await admin.send("CLIENT", "UNPAUSE")
        #expect(try await set.value == .simpleString("OK"))
        await cache.waitForPendingWrites()

        #expect(try await admin.send("GET", prefix + "k") == .bulkString(ByteBuffer(string: "newer")),
                "the failed back-fill's clean-up deleted another client's newer value")
        // The levels above were flushed when the tracking connection was lost: the newer value is answered.
        var last: String?
        let answered = await poll(timeout: .seconds(3)) {
            last = try? await cache.getIfPresent("k")
            return last == "newer"
        }
        #expect(answered, "the composition answers \(last ?? "nothing"), not newer")
        await cache.waitForPendingWrites()
        await writer.shutdown()
        await admin.shutdown()
        await redis.shutdown()
        await server.kill()
    }
}
