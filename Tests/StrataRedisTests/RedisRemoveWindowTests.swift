import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// The cache-less window after a remove or clear: a read that begins once
/// the remove has returned is cached again at once (#32), while a read that
/// overlapped it is still declined (``RedisInvalidationTests``).
extension RedisInvalidationTests {
    /// `memory + redis + origin`, a remove or clear through the stack, then
    /// a get at once: it loads, and its answer lands in Redis and memory (it
    /// was declined for 250 ms after the remove: every get in that window
    /// reached the origin).
    @Test(arguments: [false, true])
    func aReadThatBeginsAfterARemoveIsCachedAtOnce(clear: Bool) async throws {
        let server = try await RedisServer()
        let (cache, memory, redis, other, origin) = try raceSetup(server, prefix: clear ? "window-c:" : "window-r:")
        origin.open()
        try await origin.set("v1", forKey: "k")
        #expect(try await cache.getIfPresent("k") == "v1")
        await cache.waitForPendingWrites()
        if clear { await cache.clear() } else { try await cache.remove("k") }  // (the origin too)
        try await origin.set("v2", forKey: "k")
        #expect(try await cache.getIfPresent("k") == "v2")
        await cache.waitForPendingWrites()
        #expect(try await other.getIfPresent("k") == "v2", "the read after the remove was not back-filled into Redis")
        #expect(memory.value(forKey: "k") == "v2", "the read after the remove was not back-filled into memory")
        #expect(cache.backfillsSkipped == 0)
        let reads = origin.reads.load(ordering: .relaxed)
        #expect(try await cache.getIfPresent("k") == "v2")
        #expect(origin.reads.load(ordering: .relaxed) == reads, "the second get reached the origin")
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }

    /// The same, with the remove made by another process (another level on
    /// the prefix): a read that begins after it returned is cached.
    @Test func aReadThatBeginsAfterAnotherProcesssRemoveIsCachedAtOnce() async throws {
        let server = try await RedisServer()
        let (cache, _, redis, other, origin) = try raceSetup(server, prefix: "window-o:")
        origin.open()
        try await origin.set("v", forKey: "k")
        try await other.remove("k")
        #expect(try await cache.getIfPresent("k") == "v")
        await cache.waitForPendingWrites()
        #expect(try await other.getIfPresent("k") == "v", "a read after another process's remove was not back-filled")
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }
}
