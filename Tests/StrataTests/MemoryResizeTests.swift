import Foundation
import Synchronization
@testable import Strata
import StrataTestSupport
import Testing

/// ``MemoryCacheLevel/resize(capacity:countLimit:)``: limits changed in
/// place, shrinking by the level's policy, counted as evictions.
@Suite struct MemoryResizeTests {
    /// A flag writers poll to stop.
    final class Stop: Sendable {
        let flag = Atomic<Bool>(false)
        var isSet: Bool { flag.load(ordering: .acquiring) }
        func set() { flag.store(true, ordering: .releasing) }
    }

    @Test func shrinkingAnLRULevelEvictsTheLeastRecentlyUsedAndCountsThem() throws {
        let level = MemoryCacheLevel<Int, Int>(capacity: 1_000, countLimit: 10, policy: .lru) { _ in 1 }
        for key in 0..<10 { try level.store(key, forKey: key) }
        for key in 0..<5 { _ = level.value(forKey: key) }  // 0-4 are now the most recent
        let evicted = level.resize(capacity: 1_000, countLimit: 5)
        #expect(evicted == 5)
        #expect(level.evictions == 5)
        #expect(level.count == 5)
        #expect(level.countLimit == 5)
        #expect(Set(level.keysByRecency()) == Set(0..<5))
    }

    @Test func shrinkingAnAdaptiveLevelKeepsTheMostRequestedAndDeclinesNothing() throws {
        let level = MemoryCacheLevel<Int, Int>(capacity: 10_000, countLimit: 100, policy: .adaptive) { _ in 1 }
        for key in 0..<100 { try level.store(key, forKey: key) }
        for _ in 0..<10 { for key in 0..<10 { _ = level.value(forKey: key) } }
        let declined = level.admissionsRejected
        let evicted = level.resize(capacity: 10_000, countLimit: 10)
        #expect(evicted == 90)
        #expect(level.evictions == 90)
        #expect(level.count == 10)
        #expect(level.admissionsRejected == declined)
        #expect(Set(level.keysByRecency()) == Set(0..<10))
    }

    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func shrinkingTheByteCapacityEvictsToIt(policy: EvictionPolicy) throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1_000, policy: policy)
        for key in 0..<10 { try level.store(Data(count: 100), forKey: "k\(key)") }
        #expect(level.resize(capacity: 450, countLimit: nil) == 6)
        #expect(level.count == 4)
        #expect(level.totalCost == 400)
        #expect(level.capacity == 450)
        // A value over the new capacity is refused, as at creation.
        #expect(throws: MemoryCacheError.valueTooLarge(cost: 500, capacity: 450)) {
            try level.store(Data(count: 500), forKey: "big")
        }
    }

    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func growingEvictsNothingAndMakesRoom(policy: EvictionPolicy) throws {
        let level = MemoryCacheLevel<Int, Int>(capacity: 1_000, countLimit: 5, policy: policy) { _ in 1 }
        for key in 0..<5 { try level.store(key, forKey: key) }
        #expect(level.resize(capacity: 1_000, countLimit: 10) == 0)
        for key in 5..<10 { try level.store(key, forKey: key) }
        #expect(level.count == 10)
        #expect(level.evictions == 0)
        // No count limit at all: only the bytes bound it.
        #expect(level.resize(capacity: 1_000, countLimit: nil) == 0)
        #expect(level.countLimit == nil)
        for key in 10..<50 { try level.store(key, forKey: key) }
        #expect(level.count == 50)
        #expect(level.evictions == 0)
    }

    /// Waits (polling, with a generous deadline) until `counter` reaches `target`.
    static func waitFor(_ counter: Counter, _ target: Int) {
        let deadline = ContinuousClock.now + .seconds(60)
        while counter.value < target && ContinuousClock.now < deadline { sched_yield() }
    }

    /// Writers racing a resize: once they are done, the level is within the
    /// limits the last resize set and its totals are what it holds.
    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func writersRacingAResizeEndWithinTheNewBound(policy: EvictionPolicy) async {
        for (round, bound) in [37, 1, 120, 5].enumerated() {
            let level = MemoryCacheLevel<Int, Int>(capacity: 1 << 40, countLimit: 400, policy: policy) { $0 % 7 + 1 }
            let stop = Stop()
            let steps = Counter()
            let writers: [@Sendable () -> Void] = (0..<4).map { task in {
                var random = SplitMix64(seed: UInt64(round * 10 + task + 1))
                // 5,000 steps each after the resize (a cap in case the flag never comes).
                var after = 0, done = 0
                while after < 5_000 && done < 10_000_000 {
                    if stop.isSet { after += 1 }
                    let key = Int(random.next() % 2_000)
                    if random.next() % 3 == 0 { _ = level.value(forKey: key) } else { try? level.store(key, forKey: key) }
                    done += 1
                    if done % 256 == 0 { steps.add(256) }
                }
            } }
            let resizer: @Sendable () -> Void = {
                // Resize while the writers run.
                Self.waitFor(steps, 4_000)
                level.resize(capacity: 1 << 40, countLimit: 200)
                level.resize(capacity: 1 << 40, countLimit: bound)
                stop.set()
            }
            await onThreads(writers + [resizer])
            #expect(level.count <= bound, "\(policy) round \(round): \(level.count) entries over the bound \(bound)")
            let present = (0..<2_000).compactMap { level.value(forKey: $0) }
            #expect(present.count == level.count)
            #expect(present.reduce(0) { $0 + $1 % 7 + 1 } == level.totalCost)
        }
    }

    /// Keys that fit in every size the level is given are never lost: gets
    /// and same-size sets of 100 keys race resizes between 100 and 2,000.
    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func aResizeNeverLosesAKeyThatFits(policy: EvictionPolicy) async throws {
        let level = MemoryCacheLevel<Int, Int>(capacity: 1 << 40, countLimit: 1_000, policy: policy) { _ in 1 }
        for key in 0..<100 { try level.store(key, forKey: key) }
        let stop = Stop()
        let lost = Counter(), operations = Counter()
        let racers: [@Sendable () -> Void] = (0..<4).map { task in {
            var random = SplitMix64(seed: UInt64(task + 1))
            var done = 0
            while !stop.isSet && done < 10_000_000 {
                done += 1
                if done % 64 == 0 { operations.add(64) }
                let key = Int(random.next() % 100)
                if random.next() % 2 == 0 {
                    if level.value(forKey: key) == nil { lost.add(1) }
                } else {
                    try? level.store(key, forKey: key)
                }
            }
        } }
        let resizer: @Sendable () -> Void = {
            for limit in [500, 100, 2_000, 150, 100, 1_000, 100] {
                // Each resize while the racers run.
                Self.waitFor(operations, operations.value + 2_000)
                level.resize(capacity: 1 << 40, countLimit: limit)
            }
            stop.set()
        }
        await onThreads(racers + [resizer])
        #expect(lost.value == 0)
        #expect(level.evictions == 0)
        #expect(level.count == 100)
        #expect(Set(level.keysByRecency()) == Set(0..<100))
    }

    /// A count shared by threads.
    final class Counter: Sendable {
        private let total = Atomic<Int>(0)
        var value: Int { total.load(ordering: .relaxed) }
        func add(_ n: Int) { total.add(n, ordering: .relaxed) }
    }
}
