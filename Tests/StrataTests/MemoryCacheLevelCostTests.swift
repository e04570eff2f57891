import Foundation
import Strata
import Testing

@Suite struct MemoryCacheLevelCostTests {
    @Test func negativeCostFromTheCostClosureIsATypedError() async throws {
        let level = MemoryCacheLevel<String, String>(capacity: 100) { $0 == "bad" ? -50 : $0.utf8.count }
        try await level.set("ok", forKey: "a")
        await #expect(throws: MemoryCacheError.negativeCost(cost: -50)) {
            try await level.set("bad", forKey: "b")
        }
        #expect(level.totalCost == 2, "a negative cost would let the level hold more than its capacity")
        #expect(level.count == 1)
    }
}
