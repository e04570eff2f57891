import Foundation
@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// A stack that goes leaves nothing stale behind (from a review, each test
/// failed before its fix): its upper level forgets what nothing keeps
/// coherent any more, a back-fill of an inner stack still landing is undone,
/// a new disk level over the same directory sees the mark, and a persistent
/// key-value domain forgets too.
@Suite struct StackReleaseCoherenceTests {
    final class Weak: @unchecked Sendable {
        // Safe: written once, in `init`, before the box is shared; weak loads are atomic.
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

    /// `memory + disk + shared` built per request. The inner stack's
    /// back-fill (disk -> memory) holds only the inner coordinator; the outer
    /// one goes (lostCoherence empties memory) before it lands.
    @Test func innerBackfillLandingAfterOuterStackWentIsServedStale() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20, policy: .lru)
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
        let shared = FakeLevel<String, String>(name: "shared")
        let holding = Mutex(false)
        let gate = Gate()
        // memory with its sets held on demand (a slow back-fill task)
        let top = memory.mapValues({ $0 }, inverse: { v in
            if holding.withLock({ $0 }) { try await gate.wait() }
            return v
        })
        let md = top + disk                      // the inner stack, built once and kept
        let outer: Weak
        var innerTracker: BackfillTracker? = nil
        do {
            let cache = md + shared
            outer = Weak(cache.stack)
            innerTracker = cache.upper.backfills
            try await cache.set("v1", forKey: "k")   // v1 everywhere, while this stack keeps it coherent
            memory.removeAll()                       // evicted from memory; still on disk
            holding.withLock { $0 = true }
            // memory miss, disk hit; the inner back-fill into memory is held.
            #expect(try await cache.get("k") == "v1")
            #expect(await poll { gate.waiting == 1 }, "no back-fill waiting: started \(cache.upper.backfillsStarted) skipped \(cache.upper.backfillsSkipped)")
        }
        #expect(await poll { outer.object == nil }, "outer stack still alive")
        holding.withLock { $0 = false }
        gate.open()
        #expect(await poll { innerTracker!.counts.pending == 0 }, "the inner back-fill is still in flight")
        #expect(memory.value(forKey: "k") == nil, "a back-fill read before the stack went was undone")
        // Between requests another client changes the key; nobody listens.
        await shared.changeElsewhere("k", to: "v2")
        let cache = md + shared
        #expect(try await cache.get("k") == "v2", "served the value the other client replaced")
    }

    /// `disk + shared` per request, with a disk level per stack (same
    /// directory): coherentSince lives in the instance that went.
    @Test func aFreshDiskLevelOverTheSameDirectoryServesStale() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let shared = FakeLevel<String, String>(name: "shared", ["k": "v1"])
        do {
            let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
            let cache = disk + shared
            #expect(try await cache.get("k") == "v1")
            await cache.waitForPendingWrites()
        }
        #expect(await poll { shared.listeners.count == 0 })
        await shared.changeElsewhere("k", to: "v2")
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
        #expect(try await (disk + shared).get("k") == "v2", "served the value the other client replaced")
    }

    /// A persistent level with no lostCoherence (default: nothing).
    @Test func aKeyValueStoreAboveASharedLevelServesStale() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let kv = try KeyValueStoreLevel<String, String>(name: "kv", directory: dir.url)
        let shared = FakeLevel<String, String>(name: "shared", ["k": "v1"])
        do {
            let cache = kv + shared
            #expect(try await cache.get("k") == "v1")
            await cache.waitForPendingWrites()
        }
        #expect(await poll { shared.listeners.count == 0 })
        await shared.changeElsewhere("k", to: "v2")
        #expect(try await (kv + shared).get("k") == "v2", "served the value the other client replaced")
    }
}
