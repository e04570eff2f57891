import Foundation
import Strata
import StrataTestSupport
import Testing

/// What a composition drops from its upper level because the level below
/// reported a change made elsewhere is counted as an invalidation, never as
/// a remove: `removes` counts the removes users asked for.
@Suite struct InvalidationCountTests {
    /// A memory level over a disk level, another writer on the same directory.
    struct Fixture {
        let dir = TemporaryDirectory()
        let disk: DiskCacheLevel<String, Data>
        let other: DiskCacheLevel<String, Data>
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)

        init() throws {
            disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            other = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        }
    }

    /// The value is on disk before the composition exists: a write made
    /// straight to the disk level afterwards is a change to it from elsewhere.
    static func run<Cache: CacheLevel<String, Data>>(
        _ fixture: Fixture, statistics: LevelStatistics, _ makeCache: () -> Cache
    ) async throws {
        try await fixture.disk.set(Data("old".utf8), forKey: "k")
        let cache = makeCache()
        _ = try await cache.getIfPresent("k")
        await cache.waitForPendingWrites()
        #expect(try await fixture.memory.getIfPresent("k") == Data("old".utf8))
        try await fixture.other.set(Data("new".utf8), forKey: "k")
        #expect(await poll { statistics.snapshot().invalidations == 1 }, "\(statistics.snapshot())")
        #expect(try await fixture.memory.getIfPresent("k") == nil)
        try await cache.remove("x")
        let s = statistics.snapshot()
        #expect(s.removes == 1, "the user's remove only: \(s)")
        #expect(s.invalidations == 1 && s.clears == 0)
    }

    @Test func aDroppedKeyIsAnInvalidationNotARemove() async throws {
        let fixture = try Fixture(); defer { fixture.dir.remove() }
        let l1 = fixture.memory.instrumented(name: "L1")
        try await Self.run(fixture, statistics: l1.statistics) { l1 + fixture.disk }
    }

    /// The explorer's shape: instrumented, erased, conditioned, erased.
    @Test func throughErasedAndConditionedWrappersToo() async throws {
        let fixture = try Fixture(); defer { fixture.dir.remove() }
        let l1 = fixture.memory.instrumented(name: "L1")
        let wrapped = l1.normalize().conditioned { _ in true }.normalize()
        try await Self.run(fixture, statistics: l1.statistics) { (wrapped + fixture.disk).normalize() }
    }

    @Test func aFlushIsOneInvalidationNotAClear() async throws {
        let fixture = try Fixture(); defer { fixture.dir.remove() }
        let l1 = fixture.memory.instrumented(name: "L1")
        try await fixture.disk.set(Data("old".utf8), forKey: "k")
        let cache = l1 + fixture.disk
        _ = try await cache.getIfPresent("k")
        await cache.waitForPendingWrites()
        // The directory deleted: the watch is lost, and the levels above are told anything may have changed.
        try FileManager.default.removeItem(at: fixture.dir.url)
        #expect(await poll { l1.statistics.snapshot().invalidations >= 1 }, "\(l1.statistics.snapshot())")
        #expect(try await fixture.memory.getIfPresent("k") == nil)
        #expect(l1.statistics.snapshot().clears == 0)
    }
}
