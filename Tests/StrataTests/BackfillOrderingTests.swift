import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Back-fills never bring back a value that a write removed or replaced
/// (issue: "levels that never disagree").
@Suite struct BackfillOrderingTests {
    static let iterations = 20_000

    @Test func getThenRemoveLeavesNothingBehindInMemoryOverMemory() async throws {
        let upper = MemoryCacheLevel<String, Int>(capacity: 1 << 30)
        let lower = MemoryCacheLevel<String, Int>(capacity: 1 << 30)
        let cache = upper + lower
        for i in 0..<Self.iterations {
            let key = "k\(i)"
            try await lower.set(i, forKey: key)
            #expect(try await cache.get(key) == i)
            try await cache.remove(key)
        }
        await cache.waitForPendingWrites()
        #expect(upper.count == 0, "\(upper.count) removed keys came back in the upper level")
        #expect(cache.backfillsStarted == Self.iterations)
    }

    @Test func getThenRemoveLeavesNoEntryFilesInDiskOverOrigin() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 30)
        let cache = disk + BasicFetcher<String, Data> { Data($0.utf8) }
        for i in 0..<Self.iterations {
            let key = "k\(i)"
            #expect(try await cache.get(key) == Data(key.utf8))
            try await cache.remove(key)
        }
        await cache.waitForPendingWrites()
        #expect(dir.entryFiles().count == 0, "removed keys came back on disk")
    }

    @Test func getThenSetNeverLeavesTheOlderValueAbove() async throws {
        let upper = MemoryCacheLevel<String, Int>(capacity: 1 << 30)
        let lower = MemoryCacheLevel<String, Int>(capacity: 1 << 30)
        let cache = upper + lower
        for i in 0..<Self.iterations {
            let key = "k\(i % 100)"
            upper.removeAll()
            try await lower.set(-1, forKey: key)
            _ = try await cache.get(key)
            try await cache.set(i, forKey: key)
        }
        await cache.waitForPendingWrites()
        for key in (0..<100).map({ "k\($0)" }) {
            if let above = upper.value(forKey: key) {
                #expect(above == lower.value(forKey: key), "\(key): \(above) above, \(String(describing: lower.value(forKey: key))) below")
            }
        }
    }

    @Test func staleThenFreshNeverBringsBackARemovedValue() async throws {
        let upper = MemoryCacheLevel<String, Int>(capacity: 1 << 30)
        let lower = MemoryCacheLevel<String, Int>(capacity: 1 << 30)
        let cache = upper + lower
        for i in 0..<2_000 {
            let key = "k\(i)"
            try await lower.set(i, forKey: key)
            for try await _ in cache.values(forKey: key) {}
            try await cache.remove(key)
        }
        await cache.waitForPendingWrites()
        #expect(upper.count == 0, "\(upper.count) removed keys came back through values(forKey:)")
    }

    @Test func getArrivingAfterARemoveNeverJoinsAPooledReadFromBeforeIt() async throws {
        let origin = SnapshotOrigin()
        try await origin.set("v0", forKey: "k")
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let pooled = origin.pooled()
        let cache = memory + pooled
        let first = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 1 })
        try await cache.remove("k")
        let second = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 2 || pooled.waiterCount(for: "k") == 2 })
        origin.open()
        _ = try await first.value  // began before the remove: may see v0
        #expect(try await second.value == nil, "a get after the remove received the value read before it")
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "k") == nil, "the removed value was back-filled")
    }

    @Test func concurrentGetsSetsAndRemovesKeepMemoryOverMemoryConsistent() async throws {
        let upper = MemoryCacheLevel<String, Int>(capacity: 1 << 30)
        let lower = MemoryCacheLevel<String, Int>(capacity: 1 << 30)
        try await Self.hammer(upper + lower, dropUpper: { upper.removeAll() })
        for i in 0..<64 {
            let key = "k\(i)"
            if let above = upper.value(forKey: key) {
                #expect(above == lower.value(forKey: key), "\(key): \(above) above, \(String(describing: lower.value(forKey: key))) below")
            }
        }
    }

    @Test func concurrentGetsSetsAndRemovesKeepMemoryOverDiskConsistent() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let upper = MemoryCacheLevel<String, Int>(capacity: 1 << 30)
        let lower = try DiskCacheLevel<String, Int>(directory: dir.url, capacity: 1 << 30)
        try await Self.hammer(upper + lower, operations: 400, dropUpper: { upper.removeAll() })
        for i in 0..<64 {
            let key = "k\(i)"
            if let above = upper.value(forKey: key) {
                let below = try await lower.getIfPresent(key)
                #expect(above == below, "\(key): \(above) above, \(String(describing: below)) below")
            }
        }
    }

    /// 8 tasks of random gets, sets and removes on 64 keys; every set writes a
    /// value no other set writes. Occasionally the upper level is emptied so
    /// that gets fall through and back-fill.
    static func hammer<C: CacheLevel>(
        _ cache: C, operations: Int = 3_000, dropUpper: @escaping @Sendable () -> Void
    ) async throws where C.Key == String, C.Value == Int {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var rng = SplitMix64(seed: UInt64(worker + 1))
                    for op in 0..<operations {
                        let key = "k\(rng.next() % 64)"
                        switch rng.next() % 10 {
                        case 0..<5: _ = try await cache.getIfPresent(key)
                        case 5..<8: try await cache.set(worker * 1_000_000 + op, forKey: key)
                        case 8: try await cache.remove(key)
                        default: dropUpper()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        await cache.waitForPendingWrites()
    }
}

@Suite struct PendingWritesTests {
    /// An upper level whose sets of a key wait on that key's gate.
    final class SlowSets: CacheLevel, Sendable {
        let gates: [String: Gate]
        let everyKey: Gate?
        let stored = Mutex<[String: Int]>([:])
        init(keys: [String], everyKey: Gate? = nil) {
            gates = Dictionary(uniqueKeysWithValues: keys.map { ($0, Gate()) })
            self.everyKey = everyKey
        }
        func getIfPresent(_ key: String) async throws -> Int? { stored.withLock { $0[key] } }
        func set(_ value: Int, forKey key: String) async throws {
            try await gates[key]?.wait()
            try await everyKey?.wait()
            stored.withLock { $0[key] = value }
        }
        func remove(_ key: String) async throws { _ = stored.withLock { $0.removeValue(forKey: key) } }
        func clear() async {}
        func onMemoryWarning() async {}
    }

    @Test func waitForPendingWritesWaitsForEarlierBackfillsOnlyAndCannotStarve() async throws {
        let upper = SlowSets(keys: ["a", "b"])
        let cache = upper + BasicFetcher<String, Int> { $0.count }
        _ = try await cache.get("a")  // back-fill of a: held
        let waiter = Task { await cache.waitForPendingWrites() }
        // Long timeouts: the back-fills are tasks, and the module's stress
        // tests beside this one can keep the pool busy for seconds.
        #expect(await poll(timeout: .seconds(60)) { upper.gates["a"]!.waiting == 1 })
        _ = try await cache.get("b")  // started after the call: held until the end
        #expect(await poll(timeout: .seconds(60)) { upper.gates["b"]!.waiting == 1 })
        upper.gates["a"]!.open()
        await waiter.value  // returns although b's back-fill is still pending
        #expect(upper.stored.withLock { $0["a"] } == 1)
        #expect(upper.stored.withLock { $0["b"] } == nil)
        upper.gates["b"]!.open()
        await cache.waitForPendingWrites()
        #expect(upper.stored.withLock { $0["b"] } == 1)
    }

    @Test func backfillsInFlightAreBoundedAndTheRestDropped() async throws {
        let gate = Gate()
        let upper = SlowSets(keys: [], everyKey: gate)
        let cache = upper + BasicFetcher<String, Int> { $0.count }
        for i in 0..<2_000 { _ = try await cache.get("k\(i)") }
        #expect(cache.backfillsStarted == 1_024)
        #expect(cache.backfillsSkipped == 976)
        gate.open()
        await cache.waitForPendingWrites()
        #expect(upper.stored.withLock { $0.count } == 1_024)
    }
}
