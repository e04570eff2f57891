import Foundation
import Synchronization
@testable import Strata
import StrataTestSupport
import Testing

/// Stress tests from a review of the pending policy writes and the evictor
/// hand-over: they also check the level's internals (shards, policy and
/// totals agree; nothing left pending).
@Suite struct PendingWriteStressTests {
    struct Snapshot: CustomStringConvertible {
        var shardCount = 0, shardCost = 0, unapplied = 0
        var policyCount = 0, policyCost = 0, pending = 0
        var levelCount = 0, levelCost = 0
        var description: String {
            "level \(levelCount)/\(levelCost) shards \(shardCount)/\(shardCost) policy \(policyCount)/\(policyCost) unapplied \(unapplied) pending \(pending)"
        }
    }

    static func snapshot<V>(_ level: MemoryCacheLevel<Int, V>) -> Snapshot {
        var s = Snapshot()
        for shard in level.shards {
            shard.state.withLock { state in
                for node in state.nodes where node.key != nil {
                    s.shardCount += 1
                    s.shardCost += node.cost
                    if level.isAdaptive && node.policyID < 0 { s.unapplied += 1 }
                }
            }
        }
        if level.isAdaptive {
            level.adaptive.withLock { p in
                s.policyCount = p.totalCount
                s.policyCost = p.totalCost
            }
        }
        s.pending = level.pendingWriteCount.load(ordering: .sequentiallyConsistent)
        s.levelCount = level.count
        s.levelCost = level.totalCost
        return s
    }

    /// Threads write (changing costs, with and without expiry), remove,
    /// clear, remove expired and read; each owns its keys. Afterwards: no
    /// stale answers, exact totals, limits hold, policy and shards agree.
    @Test(arguments: [EvictionPolicy.adaptive, .lru])
    func mixedThreadsLeaveAConsistentLevel(policy: EvictionPolicy) async {
        for round in 0..<6 {
            let clock = TestClock()
            let level = MemoryCacheLevel<Int, Int>(capacity: 2_000, countLimit: 120, policy: policy, clock: clock) { $0 % 37 + 1 }
            let threads = 4, keysPerThread = 100
            let stale = Atomic<Int>(0)
            await onThreads(threads) { t in
                var random = SplitMix64(seed: UInt64(round * 10 + t + 1))
                var latest: [Int: Int] = [:]
                for step in 0..<20_000 {
                    let key = t * keysPerThread + Int(random.next() % UInt64(keysPerThread))
                    switch random.next() % 20 {
                    case 0..<9:
                        let value = (step * threads + t) * 1_000 + Int(random.next() % 1_000)
                        let expiry: CacheInstant? = random.next() % 4 == 0 ? clock.now().advanced(by: .seconds(1)) : nil
                        try? level.store(value, forKey: key, expiresAt: expiry)
                        latest[key] = value
                    case 9:
                        level.removeStored(key)
                        latest[key] = nil
                    case 10 where step % 1_500 == 0:
                        level.removeAll()
                        latest.removeAll()
                    case 11 where step % 700 == 0:
                        clock.advance(by: .milliseconds(300))
                    case 12 where step % 300 == 0:
                        // removeExpired() without its async wrapper
                        if level.isAdaptive {
                            _ = level.withPolicy { p in level.removeExpiredFromShards { p.remove($0) } }
                        } else {
                            _ = level.removeExpiredFromShards { _ in }
                        }
                    default:
                        if let v = level.value(forKey: key), v != latest[key] { stale.add(1, ordering: .relaxed) }
                    }
                }
                for key in t * keysPerThread..<(t + 1) * keysPerThread {
                    if let v = level.value(forKey: key), v != latest[key] { stale.add(1, ordering: .relaxed) }
                }
            }
            let s = Self.snapshot(level)
            #expect(stale.load(ordering: .relaxed) == 0, "round \(round)")
            #expect(s.levelCount == s.shardCount && s.levelCost == s.shardCost, "round \(round): \(s)")
            #expect(s.levelCount <= 120 && s.levelCost <= 2_000, "round \(round): \(s)")
            if policy == .adaptive {
                #expect(s.unapplied == 0 && s.pending == 0, "round \(round): \(s)")
                #expect(s.policyCount == s.shardCount && s.policyCost == s.shardCost, "round \(round): \(s)")
            }
        }
    }
}

@Suite struct PendingWriteSharedKeyTests {
    /// Threads fight over a few keys (in-place pending updates of nodes the
    /// policy knows, reads that fill buffers, removes, clears, expiry).
    @Test(arguments: [EvictionPolicy.adaptive, .lru])
    func sharedKeysLeaveAConsistentLevel(policy: EvictionPolicy) async {
        for round in 0..<10 {
            let clock = TestClock()
            let level = MemoryCacheLevel<Int, Int>(capacity: 400, countLimit: 30, policy: policy, clock: clock) { $0 % 41 }
            await onThreads(4) { t in
                var random = SplitMix64(seed: UInt64(round * 100 + t + 1))
                for step in 0..<15_000 {
                    let key = Int(random.next() % 64)
                    switch random.next() % 16 {
                    case 0..<7:
                        let expiry: CacheInstant? = random.next() % 3 == 0 ? clock.now().advanced(by: .milliseconds(Int64(random.next() % 500))) : nil
                        try? level.store(Int(random.next() % 100_000), forKey: key, expiresAt: expiry)
                    case 7: level.removeStored(key)
                    case 8 where step % 2_000 == 0: level.removeAll()
                    case 9 where step % 200 == 0: clock.advance(by: .milliseconds(100))
                    case 10 where step % 500 == 0:
                        if level.isAdaptive {
                            _ = level.withPolicy { p in level.removeExpiredFromShards { p.remove($0) } }
                        } else {
                            _ = level.removeExpiredFromShards { _ in }
                        }
                    case 11 where step % 1_000 == 0: _ = level.admissionsRejected
                    default: _ = level.value(forKey: key)
                    }
                }
            }
            let s = PendingWriteStressTests.snapshot(level)
            #expect(s.levelCount == s.shardCount && s.levelCost == s.shardCost, "round \(round): \(s)")
            #expect(s.levelCount <= 30 && s.levelCost <= 400, "round \(round): \(s)")
            if policy == .adaptive {
                #expect(s.unapplied == 0 && s.pending == 0, "round \(round): \(s)")
                #expect(s.policyCount == s.shardCount && s.policyCost == s.shardCost, "round \(round): \(s)")
            }
        }
    }
}

@Suite struct PendingCostChangeTests {
    @Test func pendingCostChangesReachThePolicy() throws {
        let level = MemoryCacheLevel<Int, Int>(capacity: 1_000, countLimit: 10, policy: .adaptive) { $0 }
        for key in 0..<5 { try level.store(10, forKey: key) }
        level.withPolicy { _ in
            try? level.store(30, forKey: 1)   // policy knows 1: cost 10 → 30, pending
            try? level.store(5, forKey: 100)  // new, pending
            try? level.store(7, forKey: 100)  // new again, in place, token changes
            try? level.store(40, forKey: 2)   // 10 → 40
        }
        let s = PendingWriteStressTests.snapshot(level)
        #expect(s.unapplied == 0 && s.pending == 0, "\(s)")
        #expect(s.policyCount == s.shardCount && s.policyCost == s.shardCost, "\(s)")
        #expect(s.levelCount == s.shardCount && s.levelCost == s.shardCost && s.levelCost <= 1_000, "\(s)")
    }
}
