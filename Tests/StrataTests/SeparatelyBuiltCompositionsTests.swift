@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Two compositions of the same levels built separately (one per request,
/// or two parts of a program that each compose the levels they are given):
/// a write through one orders against the back-fills of the other, as
/// through one composition.
@Suite struct SeparatelyBuiltCompositionsTests {
    final class Flag: Sendable { let done = Atomic<Bool>(false) }

    @Test func aWriteThroughOneDropsABackfillOfTheOtherBegunBeforeIt() async throws {
        let top = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let bottom = FakeLevel<String, String>(name: "bottom", ["k": "old"])
        let gate = Gate()
        bottom.holdGets(on: gate)
        bottom.readBeforeHolding(true)
        let reader = top + bottom
        let read = Task { try await reader.getIfPresent("k") }
        #expect(await poll { bottom.callCounts.gets == 1 })
        let writer = top + bottom
        try await writer.set("new", forKey: "k")
        gate.open()
        #expect(try await read.value == "old")  // began before the write
        await reader.waitForPendingWrites()
        #expect(top.value(forKey: "k") == "new", "a back-fill begun before the write landed after it")
        #expect(try await (top + bottom).getIfPresent("k") == "new")
    }
    /// The shared orders are held weakly: compositions over 2,000 distinct
    /// levels, all alive, leave no order behind once the compositions go (a
    /// table holding them would keep 2,000).
    @Test func sharedOrdersGoWithTheirCompositions() async throws {
        let shared = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let levels = (0..<2_000).map { _ in MemoryCacheLevel<String, String>(capacity: 1 << 10) }
        for level in levels { try await (level + shared).set("v", forKey: "k") }
        #expect(SharedWriteOrders.count < 600, "\(SharedWriteOrders.count) orders kept")
        withExtendedLifetime(levels) {}
    }

    /// Compositions sharing orders, nested every way (one inside another,
    /// the same one on both sides, as upper of one and lower of another),
    /// with reports arriving from a store below and back-fills in flight:
    /// every operation finishes.
    @Test func nestedSharingNeverDeadlocks() async throws {
        let storeA = FakeLevel<String, String>(name: "a", ["k": "a"]), storeB = FakeLevel<String, String>(name: "b", ["k": "b"])
        let a = ListenerPruningTests.DirectLevel(storeA), b = ListenerPruningTests.DirectLevel(storeB)
        let c = MemoryCacheLevel<String, String>(capacity: 1 << 20), d = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let finished = Flag()
        let work = Task {
            await withTaskGroup(of: Void.self) { group in
                for round in 0..<50 {
                    let key = "k\(round % 5)"
                    group.addTask { let z = (a + b) + (a + b); try? await z.set("v\(round)", forKey: key); _ = try? await z.getIfPresent(key) }
                    group.addTask { let p = (a + b) + c; try? await p.set("w\(round)", forKey: key); _ = try? await p.getIfPresent("x\(round)") }
                    group.addTask { let q = d + (a + b); await q.clear(); _ = try? await q.getIfPresent(key) }
                    group.addTask { try? await (a + b).remove(key); _ = try? await (c + (a + b)).getIfPresent(key) }
                    group.addTask { await storeB.changeElsewhere(key, to: "e\(round)"); await storeA.flushElsewhere() }
                }
            }
            finished.done.store(true, ordering: .releasing)
        }
        #expect(await poll(timeout: .seconds(60)) { finished.done.load(ordering: .acquiring) }, "an operation never finished")
        work.cancel()
    }
    /// Compositions of the same levels share one order; a struct wrapper
    /// (whose closures may act differently) gets an order of its own.
    @Test func onlyCompositionsOfTheSameLevelsShareAnOrder() {
        let top = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let bottom = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let other = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let a = top + bottom, b = top + bottom
        #expect(a.order === b.order)
        #expect((top + other).order !== a.order)
        #expect((bottom + top).order !== a.order)
        #expect((top.normalize() + bottom).order !== a.order)
        let c = a + other, d = (top + bottom) + other
        #expect(c.order === d.order, "nested compositions of the same levels share too")
    }
}
