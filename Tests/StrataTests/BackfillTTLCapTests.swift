import Foundation
import Strata
import StrataTestSupport
import Testing

/// A level's own TTL bounds how long it keeps a back-filled value: a lower
/// level's longer deadline does not extend it (`memory(ttl 10s) + disk(ttl 5m)`
/// keeps a value in memory 10 s, as FusionCache keeps its memory duration
/// under a distributed one). A shorter lower deadline still wins, and a set
/// with its own deadline keeps it.
@Suite struct BackfillTTLCapTests {
    /// Back-fills `k` from a lower level whose entry lives 5 minutes into
    /// `upper` (a level with a 10 s TTL), and checks that the upper copy is
    /// gone 11 s later while the lower one is not.
    func expectCapped<Upper: CacheLevel<String, String>>(
        _ upper: Upper, clock: TestClock, _ label: String
    ) async throws {
        let lower = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        try await lower.set("v", forKey: "k", ttl: .seconds(300))
        let cache = upper + lower
        #expect(try await cache.get("k") == "v", "\(label)")
        await cache.waitForPendingWrites()
        #expect(try await upper.getIfPresent("k") == "v", "\(label): back-filled")
        clock.advance(by: .seconds(11))
        #expect(try await upper.getIfPresent("k") == nil, "\(label): kept past its own 10 s TTL")
        #expect(lower.value(forKey: "k") == "v", "\(label): the lower entry still lives")
    }

    @Test func memoryDiskKeyValueStoreAndExpiresCapABackfillAtTheirOwnTTL() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock(SystemClock().now())
        try await expectCapped(MemoryCacheLevel<String, String>(capacity: 1000, defaultTTL: .seconds(10), clock: clock),
                               clock: clock, "memory")
        try await expectCapped(DiskCacheLevel<String, String>(directory: dir.url.appendingPathComponent("disk"),
                                                              capacity: 1 << 20, codec: .string,
                                                              defaultTTL: .seconds(10), clock: clock),
                               clock: clock, "disk")
        try await expectCapped(KeyValueStoreLevel<String, String>(name: "kv", directory: dir.url.appendingPathComponent("kv"),
                                                                  codec: .string, defaultTTL: .seconds(10), clock: clock),
                               clock: clock, "key-value store")
        try await expectCapped(MemoryCacheLevel<String, String>(capacity: 1000, clock: clock).expires(at: .seconds(10)),
                               clock: clock, "expires(at:)")
    }

    @Test func aShorterLowerDeadlineStillWinsAndASetKeepsItsOwnDeadline() async throws {
        let clock = TestClock()
        let upper = MemoryCacheLevel<String, String>(capacity: 1000, defaultTTL: .seconds(10), clock: clock)
        let lower = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        let cache = upper + lower
        try await lower.set("v", forKey: "short", ttl: .seconds(3))
        #expect(try await cache.get("short") == "v")
        await cache.waitForPendingWrites()
        clock.advance(by: .seconds(4))
        #expect(upper.value(forKey: "short") == nil, "the lower entry's earlier deadline holds")
        // A set with its own deadline is the caller's choice: kept as given.
        try await cache.set("w", forKey: "long", ttl: .seconds(60))
        clock.advance(by: .seconds(30))
        #expect(upper.value(forKey: "long") == "w")
    }
}
