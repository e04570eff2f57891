import Foundation
import Strata
import StrataTestSupport
import Testing

/// The disk level keeps the answer what it was: entries carry their expiry
/// through back-fills, and a refused set leaves no older value behind.
@Suite struct DiskConsistencyTests {
    @Test func aDiskEntryCarriesItsExpiryIntoTheMemoryLevelAbove() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(capacity: 1000, defaultTTL: .seconds(3600), clock: clock)
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20, clock: clock)
        let cache = memory + disk
        try await disk.set("v", forKey: "k", ttl: .seconds(10))
        let stored = try await disk.entry(forKey: "k")
        #expect(stored?.expiresAt == clock.now().advanced(by: .seconds(10)))
        clock.advance(by: .seconds(5))
        // (The disk level reports the direct set to the composition at once,
        // which drops a back-fill made meanwhile: read until one stays.)
        #expect(await poll {
            guard (try? await cache.get("k")) == "v" else { return false }
            await cache.waitForPendingWrites()
            return memory.value(forKey: "k") == "v"
        })
        clock.advance(by: .seconds(6))
        #expect(memory.value(forKey: "k") == nil, "the back-fill outlived the disk entry's TTL")
        #expect(try await cache.getIfPresent("k") == nil)
    }

    @Test func aValueTooLargeForTheDiskDropsTheOlderValue() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 4096)
        try await disk.set(Data("old".utf8), forKey: "k")
        await #expect(throws: DiskCacheError.self) { try await disk.set(Data(count: 10_000), forKey: "k") }
        #expect(try await disk.getIfPresent("k") == nil, "the value the failed set replaced is still served")
        #expect(dir.entryFiles().isEmpty)
    }

    @Test func anUnencodableValueDropsTheOlderValue() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let refusesNegatives = CacheCodec<Int>(
            name: "positive",
            encode: { value in
                guard value >= 0 else { throw TestError("negative") }
                return Data(String(value).utf8)
            },
            decode: { Int(String(decoding: $0, as: UTF8.self)) ?? 0 })
        let disk = try DiskCacheLevel<String, Int>(directory: dir.url, capacity: 1 << 20, codec: refusesNegatives)
        try await disk.set(1, forKey: "k")
        await #expect(throws: CodecError.self) { try await disk.set(-1, forKey: "k") }
        #expect(try await disk.getIfPresent("k") == nil)
    }

    @Test func aDeadlineBefore1970IsAlreadyExpiredNotNever() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
        try await disk.set("v", forKey: "k", expiresAt: CacheInstant(nanosecondsSince1970: 0))
        #expect(try await disk.getIfPresent("k") == nil)
        try await disk.set("v", forKey: "k", expiresAt: CacheInstant(nanosecondsSince1970: -5))
        #expect(try await disk.getIfPresent("k") == nil)
    }
}
