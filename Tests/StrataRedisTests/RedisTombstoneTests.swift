import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Tombstones against reads that overlap, a level read without `TIME`
/// (`redis + origin`), and servers that refuse scripts (from review).
extension RedisInvalidationTests {
    /// A slow read's back-fill is judged by its own age, whatever other
    /// reads of the key did meanwhile (a per-key memo of miss times let it
    /// borrow a later read's and pass the tombstone).
    @Test func aSlowBackfillDoesNotBorrowALaterReadsMissTime() async throws {
        let server = try await RedisServer()
        let (cache, _, redis, other, origin) = try raceSetup(server, prefix: "rv3-a:")
        // A second composition over the same Redis level (another code path of
        // this process), whose origin answers at once from the same data.
        let memory2 = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let direct = BasicFetcher<String, String>(getIfPresent: { key in origin.storage.withLock { $0[key] } })
        let cache2 = memory2 + redis + direct
        try await origin.set("old", forKey: "k")
        let slow = Task { try await cache.getIfPresent("k") }  // misses Redis at T1, reads "old", held
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 1 })
        #expect(try await cache2.getIfPresent("k") == "old")  // misses at T1' (memo keeps T1), back-fills: consumes T1
        await cache2.waitForPendingWrites()
        // The record is deleted, and another process removes the key (tombstone at T2).
        try await origin.remove("k")
        try await other.remove("k")
        try await memory2.remove("k")  // (evicted from memory2; in production tracking drops it)
        #expect(try await cache2.getIfPresent("k") == nil)  // misses at T3 > T2; origin has nothing: no back-fill
        origin.open()
        #expect(try await slow.value == "old")
        await cache.waitForPendingWrites()
        #expect(try await other.getIfPresent("k") == nil,
                "the slow read's back-fill used the later read's miss time and put the deleted record back")
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }

    /// Many other misses, then a later miss of the key, change nothing for a
    /// slow read's back-fill.
    @Test func aClearedMemoDoesNotLetALaterMissTimeThrough() async throws {
        let server = try await RedisServer()
        let (cache, _, redis, other, origin) = try raceSetup(server, prefix: "rv3-b:")
        try await origin.set("old", forKey: "k")
        let slow = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 1 })
        _ = await redis.entries(forKeys: (0..<4096).map { "other\($0)" }, maxConcurrency: nil)  // 4,096 misses: memo cleared
        try await origin.set("new", forKey: "k")
        try await other.remove("k")
        _ = try await redis.entry(forKey: "k")  // a later miss of k (a cache-only lookup): T3 > tombstone
        origin.open()
        #expect(try await slow.value == "old")
        await cache.waitForPendingWrites()
        #expect(try await other.getIfPresent("k") == nil, "the old answer was written into Redis")
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }

    /// `redis + origin`: a read that begins after a remove or clear is
    /// back-filled (its age is known without a `TIME` reply).
    @Test(arguments: [false, true])
    func redisOverOriginBackfillsAfterAnEarlierRemoveOrClear(clear: Bool) async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "rv3-c:", invalidatesLevelsAbove: false)
        let cache = redis + BasicFetcher<String, String>(getIfPresent: { "v-\($0)" })
        if clear { await redis.clear() } else { try await redis.remove("k") }
        // Time itself is what is tested: past the margin, the tombstone is older than the read.
        try await Task.sleep(for: RedisCacheLevel<String, String>.backfillMargin + .milliseconds(100))
        #expect(try await cache.getIfPresent("k") == "v-k")  // the read begins after the remove/clear
        await cache.waitForPendingWrites()
        #expect(try await redis.getIfPresent("k") == "v-k", "back-fill declined by a tombstone older than the read")
        #expect(cache.backfillsSkipped == 0)
        await redis.shutdown(); await server.kill()
    }

    /// Scripting not allowed (ACL, or a managed Redis without EVAL): `remove`
    /// still deletes (a plain DEL).
    @Test func removeStillDeletesWhenScriptsAreRefused() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "rv3-d:", invalidatesLevelsAbove: false)
        try await redis.set("v", forKey: "k")
        _ = try await redis.client.send("ACL", "SETUSER", "default", "-@scripting")
        _ = try? await redis.remove("k")
        #expect(try await redis.getIfPresent("k") == nil, "remove left the value in Redis")
        await redis.shutdown(); await server.kill()
    }

    /// A back-fill the server runs late (stalled here; a reconnect in
    /// production) is judged by its read's server time (its miss's `TIME`),
    /// not by when it runs: kept when no remove came after the read began
    /// (it used to be taken back), declined when one did.
    @Test(arguments: [false, true])
    func aBackfillTheServerRunsLateIsJudgedByItsReadsServerTime(removed: Bool) async throws {
        let server = try await RedisServer()
        let (cache, memory, redis, other, origin) = try raceSetup(server, prefix: removed ? "late-r:" : "late-k:")
        try await origin.set("old", forKey: "k")
        let read = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 1 })
        if removed { try await other.remove("k") }  // after the read's miss: its answer may be stale
        kill(server.process.processIdentifier, SIGSTOP)
        origin.open()
        #expect(try await read.value == "old")
        // Time itself is what is tested: the server runs the back-fill after the margin.
        try await Task.sleep(for: RedisCacheLevel<String, String>.backfillMargin + .milliseconds(200))
        kill(server.process.processIdentifier, SIGCONT)
        await cache.waitForPendingWrites()
        let expected: String? = removed ? nil : "old"
        #expect(try await other.getIfPresent("k") == expected)
        #expect(memory.value(forKey: "k") == expected)
        #expect(cache.backfillsSkipped == (removed ? 1 : 0))
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }

    /// A back-fill with no record of its read's miss (made directly here;
    /// in production a read that failed, or a record pruned) that reaches
    /// the server later than the margin allows cannot be judged against the
    /// removes it raced, so it is taken back.
    @Test func aBackfillWithNoRecordThatTheServerRunsTooLateIsTakenBack() async throws {
        let server = try await RedisServer()
        let (_, _, redis, other, _) = try raceSetup(server, prefix: "late-n:")
        let readStart = ContinuousClock.now
        kill(server.process.processIdentifier, SIGSTOP)
        let fill = Task { try await redis.backfill(Backfill(value: "old", expiresAt: nil, readStartedAt: readStart), forKey: "k") }
        // Time itself is what is tested: the server runs the back-fill after the margin.
        try await Task.sleep(for: RedisCacheLevel<String, String>.backfillMargin + .milliseconds(200))
        kill(server.process.processIdentifier, SIGCONT)
        await #expect(throws: BackfillDeclined.self) { try await fill.value }
        #expect(try await other.getIfPresent("k") == nil, "a back-fill judged too late stayed in Redis")
        await redis.shutdown(); await other.shutdown(); await server.kill()
    }
}
