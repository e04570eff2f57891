import Foundation
@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Coherence loss, from a review (each failed before its fix): a back-fill
/// that failed part-way is undone too, a pooled read begun before the loss
/// is not shared after it, and the disk's coherence mark only moves forward.
@Suite struct CoherenceLossReviewTests {
    final class Weak: @unchecked Sendable {
        // Safe: written once, in `init`, before the box is shared; weak loads are atomic.
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

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
