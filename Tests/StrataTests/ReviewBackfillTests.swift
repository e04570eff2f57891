import Strata
import Synchronization
import Testing

/// Review: back-fills into a composition now write `lower` first and
/// `upper` only if `lower` took it.
@Suite struct ReviewBackfillTests {
    /// `memory + shared + origin` while the shared store is down (its gets and
    /// sets fail): availability first, so the origin's value should still be
    /// back-filled into memory. Now memory is never filled and every read goes
    /// to the origin for as long as the shared store is down.
    @Test func aSharedStoreThatIsDownStillLetsMemoryBeBackfilled() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let shared = FakeLevel<String, String>(name: "shared")
        shared.failGets(with: TestError("down"))
        shared.failSets(with: TestError("down"))
        let origin = FakeLevel<String, String>(name: "origin", ["k": "v"])
        let cache = memory + shared + origin
        for _ in 0..<3 {
            #expect(try await cache.getIfPresent("k") == "v")
            await cache.waitForPendingWrites()
        }
        #expect(memory.value(forKey: "k") == "v", "memory not back-filled while the shared store is down")
        #expect(origin.callCounts.gets == 1, "origin read \(origin.callCounts.gets) times")
    }
}

extension ReviewBackfillTests {
    /// The new listener on `upper` moves a whole write-order stripe (1 of
    /// 256) for every key the shared store reports, so a change to an
    /// unrelated key drops an origin back-fill in flight: with Redis
    /// reporting every write under the prefix (this process's own included),
    /// a busy prefix drops most origin back-fills.
    @Test func aChangeToAnotherKeyDoesNotDropAnOriginBackfill() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let shared = FakeLevel<String, String>(name: "shared")
        let origin = FakeLevel<String, String>(name: "origin", ["k": "v"])
        let gate = Gate()
        origin.holdGets(on: gate)
        func stripe(_ key: String) -> UInt { UInt(bitPattern: key.hashValue) % 256 }
        let other = (0..<100_000).lazy.map { "other\($0)" }.first { stripe($0) == stripe("k") }!
        let cache = memory + shared + origin
        let read = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.callCounts.gets == 1 })
        await shared.changeElsewhere(other, to: "x")
        gate.open()
        #expect(try await read.value == "v")
        await cache.waitForPendingWrites()
        #expect(shared.contents["k"] == "v", "the back-fill of k was dropped for a change to \(other)")
        #expect(memory.value(forKey: "k") == "v")
        #expect(cache.backfillsSkipped == 0)
    }
}
