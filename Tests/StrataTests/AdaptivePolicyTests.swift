import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The frequency sketch behind `.adaptive` admission.
@Suite struct FrequencySketchTests {
    @Test func countsSaturateAtFifteen() {
        var sketch = FrequencySketch(entries: 1024)
        #expect(sketch.frequency(42) == 0)
        for expected in 1...15 {
            sketch.increment(42)
            #expect(sketch.frequency(42) == expected)
        }
        sketch.increment(42)
        #expect(sketch.frequency(42) == 15)
        #expect(sketch.frequency(43) <= 1, "a collision can only over-estimate, and barely at this load")
    }

    @Test func halvesEveryCounterAfterItsSample() {
        var sketch = FrequencySketch(entries: 16)
        for _ in 0..<9 { sketch.increment(7) }
        for _ in 0..<3 { sketch.increment(8) }
        let before7 = sketch.frequency(7), before8 = sketch.frequency(8)
        sketch.halve()
        #expect(sketch.frequency(7) == before7 / 2)
        #expect(sketch.frequency(8) == before8 / 2)
        // Reaching the sample size halves on its own.
        var aging = FrequencySketch(entries: 16)
        for _ in 0..<12 { aging.increment(1) }
        var other = 1_000
        while aging.additions > 0 && aging.frequency(1) > 6 {
            aging.increment(other)
            other += 1
        }
        #expect(aging.frequency(1) <= 7, "aged by halving")
        // The table is sized for at least 512 entries; aging follows the 16 asked for.
        #expect(aging.capacity == FrequencySketch.minimumEntries)
        #expect(aging.sampleSize == 10 * 16)
    }
}

@Suite struct SketchGrowthAndGhostTests {
    @Test func incrementsAreConservative() {
        // A key sharing counters with a popular one reads at most what the
        // popular one was when they met, not their sum.
        var sketch = FrequencySketch(entries: 16)
        for key in 0..<64 { sketch.increment(key) }
        let before = (0..<64).map { sketch.frequency($0) }
        sketch.increment(3)
        #expect(sketch.frequency(3) == before[3] + 1, "only the counters at the minimum move, and the minimum moves by one")
    }

    @Test func growingKeepsEveryEstimate() {
        var sketch = FrequencySketch(entries: 16)
        for key in 0..<40 { for _ in 0..<(key % 7) { sketch.increment(key) } }
        let before = (0..<40).map { sketch.frequency($0) }
        sketch.ensureCapacity(1_000)
        #expect(sketch.capacity == 1024)
        #expect(sketch.sampleSize == 10 * sketch.capacity)
        #expect((0..<40).map { sketch.frequency($0) } == before)
    }

    @Test func ghostListForgetsTheOldestBeyondItsLimit() {
        var ghosts = GhostList()
        for hash in 0..<20 { ghosts.add(hash) }
        #expect(ghosts.count == 16)
        let forgotten = ghosts.remove(3) == nil
        #expect(forgotten, "forgotten")
        let hit = ghosts.remove(4), again = ghosts.remove(4)
        #expect(hit == 15 && again == nil, "a hit consumes the member and tells how many exits came after it")
        ghosts.ensureLimit(32)
        for hash in 100..<116 { ghosts.add(hash) }
        let kept = ghosts.remove(19), newest = ghosts.remove(115)
        #expect(kept == 16 && newest == 0)
        #expect(ghosts.count == 29)
    }

    @Test func ghostHitsMoveTheWindow() {
        var adapter = WindowAdapter()
        let start = adapter.share
        adapter.recordExit(1, fromWindow: true)
        adapter.recordMiss(1, entries: 100)
        #expect(adapter.share > start)
        let grown = adapter.share
        adapter.recordExit(2, fromWindow: false)
        adapter.recordMiss(2, entries: 100)
        #expect(adapter.share < grown)
        adapter.recordMiss(3, entries: 100)
        #expect(adapter.share < grown, "a key never seen leaving moves nothing")
    }
}

@Suite struct AdaptiveMemoryLevelTests {
    /// A skewed request stream with scans mixed in.
    func requests(seed: UInt64, count: Int, keySpace: Int) -> [Int] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { i in
            if i % 1000 < 150 { return keySpace + i }  // a scan of never-repeated keys
            let u = Double.random(in: 0..<1, using: &random)
            return Int(pow(u, 3) * Double(keySpace))
        }
    }

    /// Replays get-or-set; returns the hit pattern.
    func replay(_ keys: [Int], on level: MemoryCacheLevel<Int, Int>) throws -> [Bool] {
        try keys.map { key in
            if level.value(forKey: key) != nil { return true }
            try level.store(key, forKey: key)
            return false
        }
    }

    /// `.lru` stays the default until `.adaptive` meets the hit-path bar
    /// (the callgrind guard's budgets are for the default).
    @Test func adaptiveIsTheDefaultAndLRUOnRequest() {
        #expect(MemoryCacheLevel<Int, Int>(capacity: 10) { _ in 1 }.policy == .adaptive)
        #expect(MemoryCacheLevel<Int, Int>(capacity: 10) { _ in 1 }.windowShare != nil)
        let level = MemoryCacheLevel<Int, Int>(capacity: 10, policy: .lru) { _ in 1 }
        #expect(level.policy == .lru)
        #expect(level.windowShare == nil)
    }

    @Test func singleThreadedReplayIsDeterministic() async throws {
        try await offThePool {
            let keys = requests(seed: 9, count: 30_000, keySpace: 3_000)
            let first = MemoryCacheLevel<Int, Int>(capacity: 300, policy: .adaptive) { _ in 1 }
            let second = MemoryCacheLevel<Int, Int>(capacity: 300, policy: .adaptive) { _ in 1 }
            let a = try replay(keys, on: first), b = try replay(keys, on: second)
            #expect(a == b)
            #expect(first.admissionsRejected == second.admissionsRejected)
            #expect(first.windowShare == second.windowShare)
            #expect(first.evictions == second.evictions)
        }
    }

    @Test func resistsAScanThatFlushesLRU() throws {
        func hotHits(_ policy: EvictionPolicy) throws -> Int {
            let level = MemoryCacheLevel<Int, Int>(capacity: 100, policy: policy) { _ in 1 }
            for _ in 0..<5 { _ = try replay(Array(0..<80), on: level) }  // a hot set, seen often
            _ = try replay(Array(1_000..<1_500), on: level)  // a one-time scan
            return try replay(Array(0..<80), on: level).filter { $0 }.count
        }
        #expect(try hotHits(.lru) == 0)
        #expect(try hotHits(.adaptive) >= 75)
    }

    @Test func countLimitIsNeverExceeded() throws {
        let level = MemoryCacheLevel<Int, Int>(capacity: 1_000_000, countLimit: 50, policy: .adaptive) { $0 % 7 + 1 }
        var random = SplitMix64(seed: 3)
        for _ in 0..<20_000 {
            let key = Int.random(in: 0..<400, using: &random)
            if level.value(forKey: key) == nil { try level.store(key, forKey: key) }
            #expect(level.count <= 50)
        }
        #expect(level.count == 50)
    }

    @Test func admissionWeighsByteCost() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1_000, policy: .adaptive)
        for round in 0..<4 {
            for key in 0..<10 {
                if round == 0 { try await level.set(Data(count: 100), forKey: "hot\(key)") }
                _ = level.value(forKey: "hot\(key)")
            }
        }
        #expect(level.totalCost == 1_000)
        // A large newcomer seen once loses to the often-read entries it would displace.
        try await level.set(Data(count: 500), forKey: "big")
        #expect(level.value(forKey: "big") == nil, "declined, yet the set succeeded")
        #expect(level.admissionsRejected >= 1)
        #expect(level.totalCost <= 1_000)
        #expect((0..<10).allSatisfy { level.value(forKey: "hot\($0)") != nil })
        // Asked for often enough, it is admitted.
        for _ in 0..<12 { try await level.set(Data(count: 500), forKey: "big") }
        #expect(level.value(forKey: "big")?.count == 500)
        #expect(level.totalCost <= 1_000)
    }

    @Test func expiredEntriesLeaveThePolicyToo() async throws {
        let clock = TestClock()
        let level = MemoryCacheLevel<Int, Int>(capacity: 10, policy: .adaptive, clock: clock) { _ in 1 }
        for key in 0..<10 { try await level.set(key, forKey: key, ttl: .seconds(1)) }
        clock.advance(by: .seconds(1))
        #expect(level.value(forKey: 3) == nil)
        #expect(level.count == 9)
        #expect(await level.removeExpired() == 9)
        #expect(level.count == 0 && level.totalCost == 0)
        for key in 20..<30 { try level.store(key, forKey: key) }
        #expect(level.count == 10 && level.evictions == 0, "the policy holds nothing expired")
    }

    /// Random sets, removes and gets: a hit returns the last value set, a
    /// removed key misses, the totals match the stored entries and the limits hold.
    @Test(arguments: [(1, 40, 120), (2, 300, 900), (3, 2_000, 2_500)])
    func modelInvariants(seed: UInt64, capacity: Int, keySpace: Int) async throws {
        try await offThePool {
            var random = SplitMix64(seed: seed)
            let level = MemoryCacheLevel<Int, Int>(capacity: capacity * 3, policy: .adaptive) { $0 % 5 + 1 }
            var last: [Int: Int] = [:]
            for step in 0..<20_000 {
                let key = Int.random(in: 0..<keySpace, using: &random)
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4:
                    let value = key * 10 + step % 7
                    try level.store(value, forKey: key)
                    last[key] = value
                case 4:
                    try await level.remove(key)
                    last[key] = nil
                default:
                    if let value = level.value(forKey: key) {
                        #expect(value == last[key], "step \(step) key \(key)")
                    }
                }
                #expect(level.totalCost <= capacity * 3)
            }
            let present = (0..<keySpace).compactMap { level.value(forKey: $0) }
            #expect(present.count == level.count)
            #expect(present.reduce(0) { $0 + $1 % 5 + 1 } == level.totalCost)
        }
    }

    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func concurrentGetsAndSetsKeepTheInvariants(policy: EvictionPolicy) async throws {
        let level = MemoryCacheLevel<Int, Int>(capacity: 2_000, countLimit: 300, policy: policy) { $0 % 13 + 1 }
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for i in 0..<4_000 {
                        let key = (i * 31 + worker * 7) % 1_000
                        switch i % 5 {
                        case 0, 1: try? level.store(key * 2, forKey: key)
                        case 2: try? await level.remove(key)
                        default:
                            if let value = level.value(forKey: key) { #expect(value == key * 2) }
                        }
                    }
                }
            }
        }
        #expect(level.totalCost <= 2_000)
        #expect(level.count <= 300)
        let present = (0..<1_000).filter { level.value(forKey: $0) != nil }
        #expect(present.count == level.count)
        #expect(present.reduce(0) { $0 + ($1 * 2) % 13 + 1 } == level.totalCost)
    }
}

/// The ghost lists' table against a Dictionary, under random operations with
/// many colliding keys (so probe runs wrap and deletions shift them).
@Suite struct HashedIntTableTests {
    @Test func agreesWithADictionaryUnderRandomOperations() async {
        await offThePool {
            var generator = SplitMix64(seed: 7)
            var table = HashedIntTable()
            var reference: [Int: Int] = [:]
            for step in 1...200_000 {
                // Keys from a small range, multiplied so that many share home slots.
                let key = Int(generator.next() % 512) &* 1024 &- 40_000
                switch generator.next() % 4 {
                case 0:
                    table.set(key, step)
                    reference[key] = step
                case 1:
                    #expect(table.remove(key) == reference.removeValue(forKey: key))
                case 2:
                    // Removed only if it holds the value expected: half the
                    // time its current one, else one it does not hold.
                    let expected = generator.next() % 2 == 0 ? (reference[key] ?? 1) : step
                    let had = reference[key]
                    #expect(table.remove(key, onlyIf: expected) == had)
                    if had == expected { reference[key] = nil }
                default:
                    #expect(table[key] == reference[key])
                }
                if step % 50_000 == 0 {
                    #expect(table.count == reference.count)
                    for (key, value) in reference { #expect(table[key] == value) }
                }
            }
        }
    }
}
