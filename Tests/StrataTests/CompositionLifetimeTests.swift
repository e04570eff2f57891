import Foundation
import Strata
import StrataTestSupport
import Testing

/// A composition holds its levels; its levels do not hold it. When the last
/// copy of a composition goes, the levels only it held go too (a disk level
/// lets go of its directory's watch, a Redis level closes its connections),
/// whichever levels report changes. And while it lives, the listeners it
/// registered keep its levels coherent even when nothing else holds them.
@Suite struct CompositionLifetimeTests {

    typealias Disk = DiskCacheLevel<String, String>
    typealias Memory = MemoryCacheLevel<String, String>

    static func disk(_ root: TemporaryDirectory, _ name: String) throws -> Disk {
        try Disk(directory: root.url.appendingPathComponent(name), capacity: 1 << 20)
    }

    /// Builds a composition with `make`, uses it (a miss, a set, a hit, a
    /// remove), drops it, and returns whether every level it was given was
    /// freed within `timeout`.
    static func levelsAreFreed(
        timeout: Duration = .seconds(10),
        _ make: (TemporaryDirectory) throws -> (any CacheLevel<String, String>, [AnyObject])
    ) async throws -> Bool {
        let root = TemporaryDirectory(); defer { root.remove() }
        var levels: [Weak] = []
        do {
            let (cache, objects) = try make(root)
            levels = objects.map(Weak.init)
            _ = try await cache.getIfPresent("a")
            try await cache.set("x", forKey: "b")
            #expect(try await cache.getIfPresent("b") == "x")
            try await cache.remove("b")
            await cache.waitForPendingWrites()
        }
        return await poll(timeout: timeout) { levels.allSatisfy { $0.object == nil } }
    }

    static let origin = BasicFetcher<String, String>(name: "origin") { "o-\($0)" }

    @Test func twoDiskLevelsGoWithTheirComposition() async throws {
        #expect(try await Self.levelsAreFreed { root in
            let d0 = try Self.disk(root, "d0"), d1 = try Self.disk(root, "d1")
            return (d0 + d1, [d0, d1])
        })
    }

    @Test func twoDiskLevelsOverAnOriginGoWithTheirComposition() async throws {
        #expect(try await Self.levelsAreFreed { root in
            let d0 = try Self.disk(root, "d0"), d1 = try Self.disk(root, "d1")
            return (d0 + d1 + Self.origin, [d0, d1])
        })
    }

    @Test func aCompositionNestedToTheRightGoesWithItsLevels() async throws {
        #expect(try await Self.levelsAreFreed { root in
            let d0 = try Self.disk(root, "d0"), d1 = try Self.disk(root, "d1")
            return (d0 + (d1 + Self.origin), [d0, d1])
        })
    }

    @Test func memoryOverTwoDiskLevelsThroughWrappersGoes() async throws {
        #expect(try await Self.levelsAreFreed { root in
            let m = Memory(capacity: 1 << 20)
            let d0 = try Self.disk(root, "d0"), d1 = try Self.disk(root, "d1")
            let middle = d0.conditioned { _ in true }
            return ((m + middle + d1.pooled() + Self.origin).normalize(), [m, d0, d1])
        })
    }

    /// The composition's listeners do not hold its levels; the composition
    /// does. Built where nothing else keeps the levels, it still drops from
    /// memory what another writer replaced on disk.
    @Test func aCompositionThatAloneHoldsItsLevelsStaysCoherent() async throws {
        let root = TemporaryDirectory(); defer { root.remove() }
        func make() throws -> (any CacheLevel<String, String>, Weak) {
            let memory = Memory(capacity: 1 << 20)
            return (memory + (try Self.disk(root, "d0")) + (try Self.disk(root, "d1")), Weak(memory))
        }
        let (cache, memory) = try make()
        let other = try Self.disk(root, "d1")
        try await other.set("v1", forKey: "k")
        // The other writer's report may arrive after a read's back-fill and
        // drop it: read until memory keeps the value.
        #expect(await poll {
            guard (try? await cache.getIfPresent("k")) == "v1" else { return false }
            await cache.waitForPendingWrites()
            return (memory.object as? Memory)?.value(forKey: "k") == "v1"
        }, "the composition let go of its memory level, or never back-filled it")
        try await other.set("v2", forKey: "k")
        #expect(await poll { (memory.object as? Memory)?.value(forKey: "k") == nil },
                "the memory level kept a value another writer replaced")
        #expect(try await cache.getIfPresent("k") == "v2")
    }

    /// A composition built for one request over long-lived levels, then
    /// dropped: nothing tells the memory level of the disk level's changes
    /// any more, so it forgets what it holds (``CacheLevel/lostCoherence()``),
    /// and the next composition over them never serves what another writer
    /// replaced meanwhile.
    @Test func levelsThatOutliveTheirCompositionStayCoherent() async throws {
        let root = TemporaryDirectory(); defer { root.remove() }
        let memory = Memory(capacity: 1 << 20)
        let disk = try Self.disk(root, "d0"), other = try Self.disk(root, "d0")
        try await other.set("v1", forKey: "k")
        do {
            let cache = memory + disk
            #expect(await poll {
                guard (try? await cache.getIfPresent("k")) == "v1" else { return false }
                await cache.waitForPendingWrites()
                return memory.value(forKey: "k") == "v1"
            })
        }
        try await other.set("v2", forKey: "k")
        #expect(await poll(timeout: .seconds(10)) { memory.value(forKey: "k") == nil },
                "the memory level kept a value another writer replaced")
        #expect(try await (memory + disk).getIfPresent("k") == "v2")
    }
}
