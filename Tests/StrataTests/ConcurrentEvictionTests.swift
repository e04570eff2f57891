import Foundation
@testable import Strata
import Testing

/// Writers that meet at the eviction lock: under `.lru` one of them leaves
/// its eviction to the other, under `.adaptive` its write reaches the policy
/// through the pending writes. Each task owns its keys, so what a get may
/// answer is known exactly: the task's latest value, or nothing (declined,
/// evicted, cleared), never an older value or a removed one.
@Suite struct ConcurrentEvictionTests {
    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func writersThatMeetNeverServeAnOlderValue(policy: EvictionPolicy) async throws {
        let level = MemoryCacheLevel<Int, Int>(capacity: 3_000, countLimit: 200, policy: policy) { $0 % 29 + 1 }
        let tasks = 8, keysPerTask = 150, steps = 6_000
        let stale = await withTaskGroup(of: Int.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(task + 1))
                    var latest: [Int: Int] = [:]
                    var stale = 0
                    for step in 0..<steps {
                        let key = task * keysPerTask + Int(random.next() % UInt64(keysPerTask))
                        switch random.next() % 10 {
                        case 0..<5:
                            // A new value each time, of a cost that changes
                            // with it (replacements that move the totals).
                            let value = (step * tasks + task) * 1_000 + key % 1_000
                            try? level.store(value, forKey: key)
                            latest[key] = value
                        case 5:
                            try? await level.remove(key)
                            latest[key] = nil
                        case 6 where step % 997 == 0:
                            await level.clear()
                            latest.removeAll()
                        default:
                            if let value = level.value(forKey: key), value != latest[key] { stale += 1 }
                        }
                    }
                    // After its own last write, each key answers its latest value or nothing.
                    for key in task * keysPerTask..<(task + 1) * keysPerTask {
                        if let value = level.value(forKey: key), value != latest[key] { stale += 1 }
                    }
                    return stale
                }
            }
            return await group.reduce(0, +)
        }
        #expect(stale == 0, "\(policy): \(stale) answers older than the latest write")
        // Once every writer is done, the level is within its limits and its
        // totals are what it holds.
        #expect(level.count <= 200)
        #expect(level.totalCost <= 3_000)
        let present = (0..<tasks * keysPerTask).compactMap { level.value(forKey: $0) }
        #expect(present.count == level.count)
        #expect(present.reduce(0) { $0 + $1 % 29 + 1 } == level.totalCost)
    }

    /// The same from plain threads, which block each other harder than tasks
    /// on the cooperative pool: every write evicts.
    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func threadsEvictingTogetherLeaveExactTotals(policy: EvictionPolicy) {
        let level = MemoryCacheLevel<Int, Int>(capacity: 1_000, policy: policy) { _ in 10 }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<20_000 { try? level.store(i, forKey: thread * 100_000 + i) }
        }
        #expect(level.totalCost <= 1_000)
        #expect(level.count == level.totalCost / 10)
        let present = (0..<4).flatMap { thread in (0..<20_000).filter { level.value(forKey: thread * 100_000 + $0) != nil } }
        #expect(present.count == level.count)
    }
}

/// The hand-over itself, made deterministic: a write made while another
/// thread holds the lock does not wait for it, and is still evicted for (or
/// given to the policy) when that thread lets go, not at the next write.
@Suite struct EvictionHandOverTests {
    @Test func anLRUWriteThatFindsTheEvictorBusyIsEvictedForWhenItLetsGo() throws {
        let level = MemoryCacheLevel<Int, Int>(capacity: 1_000, countLimit: 10, policy: .lru) { _ in 1 }
        for key in 0..<10 { try level.store(key, forKey: key) }
        level.evict(thenWhileHolding: {
            // As another writer would: its own eviction sees the lock taken and leaves it.
            try? level.store(100, forKey: 100)
            #expect(level.count == 11)
        })
        #expect(level.count == 10)
        #expect(level.value(forKey: 100) == 100)
        #expect(level.value(forKey: 0) == nil)  // the least recently used went
        #expect(level.evictions == 1)
    }

    @Test func anAdaptiveWriteThatFindsThePolicyBusyReachesItWhenItIsLetGo() throws {
        let level = MemoryCacheLevel<Int, Int>(capacity: 1_000, countLimit: 10, policy: .adaptive) { _ in 1 }
        for key in 0..<10 { try level.store(key, forKey: key) }
        level.withPolicy { policy in
            try? level.store(100, forKey: 100)  // into its shard now, into the policy later
            #expect(level.count == 11)
            #expect(policy.totalCount == 10)
            try? level.store(7, forKey: 7)  // a replacement of one the policy knows
        }
        #expect(level.count == 10)
        #expect(level.evictions == 1)
        #expect(level.withPolicy { $0.totalCount } == 10)
        let present = (0..<10).filter { level.value(forKey: $0) != nil } + (level.value(forKey: 100) == nil ? [] : [100])
        #expect(present.count == 10)
    }
}
