@testable import Strata
import StrataTestSupport
import Testing

/// Two compositions of the same levels built separately (one per request,
/// or two parts of a program that each compose the levels they are given):
/// a write through one orders against the back-fills of the other, as
/// through one composition.
@Suite struct SeparatelyBuiltCompositionsTests {
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
    /// The shared orders are held weakly: compositions over levels built
    /// per request leave no order behind.
    @Test func sharedOrdersGoWithTheirCompositions() async throws {
        let shared = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        for _ in 0..<2_000 {
            let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
            let cache = memory + shared
            try await cache.set("v", forKey: "k")
        }
        #expect(SharedWriteOrders.count < 600, "\(SharedWriteOrders.count) orders kept")
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
