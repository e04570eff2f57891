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

/// "Limit by count only" written as the largest capacity: writers that meet
/// a busy evictor or policy lock compare the totals against the limits plus
/// a slack, which must not overflow.
@Suite struct HugeLimitTests {
    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func theLargestCapacityWithACountLimitTakesConcurrentWrites(policy: EvictionPolicy) async {
        let level = MemoryCacheLevel<Int, Int>(capacity: .max, countLimit: 100, policy: policy) { _ in 1 }
        #expect(level.capacity == MemoryCacheLevel<Int, Int>.largestLimit, "a larger limit is treated as the largest")
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for i in 0..<10_000 { try? level.store(i, forKey: task * 1_000_000 + i) }
                }
            }
        }
        #expect(level.count <= 100)
    }
}
