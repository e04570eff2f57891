import Strata
import Synchronization
import Testing

/// Back-fills into a composition write `lower` first and
/// `upper` unless `lower` declined it.
@Suite struct SharedStoreBackfillTests {
    /// `memory + shared + origin` while the shared store is down (its gets and
    /// sets fail): availability first, so the origin's value is still
    /// back-filled into memory (a first version of the lower-then-upper order
    /// left memory empty, and every read went to the origin).
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

extension SharedStoreBackfillTests {
    /// A change the shared store reports drops back-fills of that key only,
    /// not of every key on its write-order stripe (1 of 256): Redis reports
    /// every write under the prefix (this process's own included), so a busy
    /// prefix would drop most origin back-fills.
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
