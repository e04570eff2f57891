import Foundation
import Strata
import StrataTestSupport
import Testing

@Suite struct MemoryCacheLevelTests {
    func bytes(_ n: Int, _ fill: UInt8 = 0) -> Data { Data(repeating: fill, count: n) }

    @Test func capacityIsInclusive() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 300, policy: .lru)
        for key in ["a", "b", "c"] { try await level.set(bytes(100), forKey: key) }
        #expect(level.count == 3)
        #expect(level.totalCost == 300)
        #expect(level.evictions == 0)
        try await level.set(bytes(1), forKey: "d")
        #expect(level.count == 3)
        #expect(level.value(forKey: "a") == nil)
    }

    @Test func lruOrderFollowsReads() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 300, policy: .lru)
        for key in ["a", "b", "c"] { try await level.set(bytes(100), forKey: key) }
        _ = try await level.get("a")  // a is now the most recent
        try await level.set(bytes(100), forKey: "d")
        #expect(level.value(forKey: "b") == nil, "b was least recently used")
        #expect(level.value(forKey: "a") != nil)
        #expect(level.keysByRecency() == ["a", "d", "c"])
    }

    @Test func evictionUsesCostNotCountAndRunsAcrossShards() async throws {
        let level = MemoryCacheLevel<Int, Data>(capacity: 1000, policy: .lru)
        for key in 0..<100 { try await level.set(bytes(10), forKey: key) }
        #expect(level.count == 100)
        _ = level.value(forKey: 0)
        try await level.set(bytes(500), forKey: 1000)
        #expect(level.totalCost <= 1000)
        #expect(level.count == 51)
        // The 50 oldest untouched keys went, key 0 (read) stayed.
        #expect(level.value(forKey: 0) != nil)
        #expect((1...50).allSatisfy { level.value(forKey: $0) == nil })
        #expect((51..<100).allSatisfy { level.value(forKey: $0) != nil })
        #expect(level.evictions == 50)
    }

    @Test func countLimit() async throws {
        let level = MemoryCacheLevel<String, String>(capacity: 1_000_000, countLimit: 2, policy: .lru)
        try await level.set("1", forKey: "a")
        try await level.set("2", forKey: "b")
        try await level.set("3", forKey: "c")
        #expect(level.count == 2)
        #expect(level.value(forKey: "a") == nil)
    }

    @Test func replacingAValueAdjustsCost() async throws {
        let level = MemoryCacheLevel<String, String>(capacity: 100)
        try await level.set(String(repeating: "x", count: 60), forKey: "k")
        try await level.set(String(repeating: "y", count: 10), forKey: "k")
        #expect(level.totalCost == 10)
        #expect(level.count == 1)
        try await level.remove("k")
        #expect(level.totalCost == 0 && level.count == 0)
    }

    @Test func valueLargerThanCapacityIsRejectedAndDropsTheOldValue() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 10)
        try await level.set(bytes(5), forKey: "k")
        await #expect(throws: MemoryCacheError.valueTooLarge(cost: 11, capacity: 10)) {
            try await level.set(bytes(11), forKey: "k")
        }
        // The set failed, so the old value must not be served in its place.
        #expect(level.value(forKey: "k") == nil)
        #expect(level.count == 0 && level.totalCost == 0)
    }

    @Test func costOfStringsIsUTF8BytesAndCustomCostWorks() async throws {
        let level = MemoryCacheLevel<String, String>(capacity: 100)
        try await level.set("é", forKey: "k")
        #expect(level.totalCost == 2)
        let custom = MemoryCacheLevel<String, [Int]>(capacity: 100) { $0.count * 8 }
        try await custom.set([1, 2, 3], forKey: "k")
        #expect(custom.totalCost == 24)
        let arrays = MemoryCacheLevel<String, [Data]>(capacity: 100)
        try await arrays.set([bytes(3), bytes(4)], forKey: "k")
        #expect(arrays.totalCost == 7)
    }

    @Test func memoryWarningEmptiesIt() async throws {
        let level = MemoryCacheLevel<Int, String>(capacity: 10_000)
        for key in 0..<100 { try await level.set("v", forKey: key) }
        await level.onMemoryWarning()
        #expect(level.count == 0 && level.totalCost == 0)
        #expect(level.value(forKey: 5) == nil)
        try await level.set("again", forKey: 5)
        #expect(level.value(forKey: 5) == "again")
    }

    @Test func expiryWithATestClock() async throws {
        let clock = TestClock()
        let level = MemoryCacheLevel<String, String>(capacity: 1000, defaultTTL: .seconds(60), clock: clock)
        try await level.set("default ttl", forKey: "a")
        try await level.set("short", forKey: "b", ttl: .seconds(5))
        let forever = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        try await forever.set("v", forKey: "c")
        clock.advance(by: .seconds(5))
        #expect(level.value(forKey: "b") == nil, "expires exactly at its deadline")
        #expect(level.count == 1, "an expired entry is deleted when read")
        #expect(level.value(forKey: "a") == "default ttl")
        clock.advance(by: .seconds(55))
        #expect(try await level.getIfPresent("a") == nil)
        #expect(forever.value(forKey: "c") == "v")
    }

    @Test func expiresAtWrapperAndSweep() async throws {
        let clock = TestClock()
        let base = MemoryCacheLevel<String, Data>(capacity: 1000, clock: clock)
        let level = base.expires(at: .seconds(0.5))
        try await level.set(bytes(3), forKey: "a")
        try await level.set(bytes(3), forKey: "b")
        try await base.set(bytes(3), forKey: "keep")
        clock.advance(by: .milliseconds(499))
        #expect(try await level.get("a") == bytes(3))
        clock.advance(by: .milliseconds(1))
        #expect(await level.removeExpired() == 2)
        #expect(base.count == 1 && base.totalCost == 3)
        let dated = base.expires(at: .date(clock.now().advanced(by: .seconds(10)).date))
        try await dated.set(bytes(1), forKey: "d")
        clock.advance(by: .seconds(10))
        #expect(base.value(forKey: "d") == nil)
    }

    @Test func concurrentStressKeepsCountsConsistent() async throws {
        let level = MemoryCacheLevel<Int, Data>(capacity: 50_000)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for i in 0..<5_000 {
                        let key = (i * 31 + worker * 7) % 2_000
                        switch i % 5 {
                        case 0, 1: try? await level.set(Data(repeating: 1, count: key % 97 + 1), forKey: key)
                        case 2: try? await level.remove(key)
                        default: _ = level.value(forKey: key)
                        }
                    }
                }
            }
        }
        #expect(level.totalCost <= 50_000)
        let keys = level.keysByRecency()
        #expect(keys.count == level.count)
        let recomputed = keys.reduce(0) { $0 + (level.value(forKey: $1)?.count ?? 0) }
        #expect(recomputed == level.totalCost)
        #expect(Set(keys).count == keys.count)
    }
}

@Suite struct MemoryCacheLevelModelTests {
    /// (seed, capacity, key space): small tables, and large ones whose shard
    /// indexes grow and delete with backward shifts.
    @Test(arguments: [(1, 40, 120), (2, 40, 120), (3, 40, 120), (4, 40, 120), (5, 2_000, 6_000), (6, 2_000, 2_500)])
    func matchesAReferenceLRUExactly(seed: UInt64, capacity: Int, keySpace: Int) async throws {
        try await offThePool {
            var random = SplitMix64(seed: seed)
            let level = MemoryCacheLevel<Int, Int>(capacity: capacity, policy: .lru) { _ in 1 }
            var reference: [Int] = []  // most recent first
            for step in 0..<20_000 {
                let key = Int.random(in: 0..<keySpace, using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4:
                    try level.store(key, forKey: key)
                    reference.removeAll { $0 == key }
                    reference.insert(key, at: 0)
                    if reference.count > capacity { reference.removeLast() }
                case 4:
                    try await level.remove(key)
                    reference.removeAll { $0 == key }
                default:
                    let hit = level.value(forKey: key) != nil
                    #expect(hit == reference.contains(key), "step \(step) key \(key)")
                    if hit {
                        reference.removeAll { $0 == key }
                        reference.insert(key, at: 0)
                    }
                }
            }
            #expect(level.keysByRecency() == reference)
            #expect(level.count == reference.count)
        }
    }
}
