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

    /// `memory + disk + shared` built per request. The inner stack's
    /// back-fill (disk -> memory) holds only the inner coordinator; the outer
    /// one goes (lostCoherence empties memory) before it lands.
    @Test func anInnerBackfillLandingAfterTheOuterStackWentIsUndone() async throws {
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
    @Test func aDiskLevelOpenedLaterSeesTheCoherenceMark() async throws {
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
    @Test func aKeyValueDomainAboveASharedLevelForgetsWhenItsStackGoes() async throws {
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

    // From a second review: a back-fill that failed part-way is undone too,
    // a pooled read begun before the loss is not shared after it, and the
    // disk's coherence mark only moves forward.


    /// The inner stack's upper level is itself a composition (L1 + L2). Its
    /// back-fill lands in L2, then fails in L1: `land` throws before its
    /// coherence check, so the undo never runs and L2 keeps a value read
    /// before the outer stack went.
    @Test func aBackfillThatFailedPartWayIsUndoneToo() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let memA = MemoryCacheLevel<String, String>(capacity: 1 << 20, policy: .lru)
        let memB = MemoryCacheLevel<String, String>(capacity: 1 << 20, policy: .lru)
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
        let shared = FakeLevel<String, String>(name: "shared")
        let holding = Mutex(false), failA = Mutex(false)
        let gate = Gate()
        let a = memA.mapValues({ $0 }, inverse: { v in
            if failA.withLock({ $0 }) { throw TestError("L1 refuses") }   // e.g. valueTooLarge in a small L1
            return v
        })
        let b = memB.mapValues({ $0 }, inverse: { v in
            if holding.withLock({ $0 }) { try await gate.wait() }
            return v
        })
        let md = (a + b) + disk
        let outer: Weak
        var tracker: BackfillTracker? = nil
        do {
            let cache = md + shared
            outer = Weak(cache.stack)
            tracker = cache.upper.backfills
            try await cache.set("v1", forKey: "k")
            memA.removeAll(); memB.removeAll()
            holding.withLock { $0 = true }; failA.withLock { $0 = true }
            #expect(try await cache.get("k") == "v1")
            #expect(await poll { gate.waiting == 1 })
        }
        #expect(await poll { outer.object == nil })
        holding.withLock { $0 = false }
        gate.open()
        #expect(await poll { tracker!.counts.pending == 0 })
        #expect(memB.value(forKey: "k") == nil, "L2 kept a back-fill read before the stack went")
        await shared.changeElsewhere("k", to: "v2")
        #expect(try await (md + shared).get("k") == "v2", "served the value the other client replaced")
    }

    /// A pooled read that began before the stack went must not be joined by
    /// a get after it (before the fix, lostCoherence did not end the pool's
    /// sharing, and the late get was answered with v1 and back-filled it).
    @Test func aPooledReadBegunBeforeTheLossIsNotSharedAfterIt() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20, policy: .lru)
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
        let shared = FakeLevel<String, String>(name: "shared")
        let holding = Mutex(false)
        let gate = Gate()
        // the disk read happens first; the answer is held on its way up
        let slowDisk = disk.mapValues({ v in
            if holding.withLock({ $0 }) { try await gate.wait() }
            return v
        }, inverse: { $0 })
        let pool = slowDisk.pooled()
        let md = memory + pool
        let outer: Weak
        let early: Task<String, any Error>
        do {
            let cache = md + shared
            outer = Weak(cache.stack)
            try await cache.set("v1", forKey: "k")
            memory.removeAll()
            holding.withLock { $0 = true }
            early = Task { try await md.get("k") }      // a read of the kept stack, in flight
            #expect(await poll { gate.waiting == 1 })
        }
        #expect(await poll { outer.object == nil })
        await shared.changeElsewhere("k", to: "v2")   // nobody listens now
        let cache2 = md + shared
        let late = Task { try await cache2.get("k") }
        holding.withLock { $0 = false }
        gate.open()
        _ = try await early.value
        let answer = try await late.value
        await md.waitForPendingWrites()
        #expect(answer == "v2", "a get that began after the change was answered with a read from before the stack went")
        #expect(memory.value(forKey: "k") != "v1", "back-filled a read from before the stack went")
        #expect(try await (md + shared).get("k") == "v2")
    }

    /// Two disk levels on one directory losing coherence at once: the mark
    /// is read, compared and written without a lock, so it can go back.
    @Test func theCoherenceMarkOnlyMovesForward() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let levels = try (0..<4).map { _ in try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20) }
        var regressions = 0
        for _ in 0..<300 {
            await withTaskGroup(of: Void.self) { group in
                for level in levels { group.addTask { level.lostCoherence() } }
            }
            let latest = levels.map { $0.coherentSince.load(ordering: .relaxed) }.max()!
            if let mark = levels[0].readCoherenceMark(), mark < latest { regressions += 1 }
        }
        #expect(regressions == 0, "the mark went back \(regressions) times")
    }
}
