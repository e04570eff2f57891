import Foundation
@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// What the memory level's inspector lists beyond size and TTL: the age of
/// each entry (since its value was last written; a hit leaves it) and hits
/// per key (counted where `.lru` already stamps a hit, and when `.adaptive`
/// drains its buffered hits), and hot keys ranked over the whole level.
@Suite struct MemoryInspectionFiguresTests {
    /// Waits (polling, no sleep) until the monotonic clock moved `nanoseconds` on.
    static func passes(_ nanoseconds: UInt64) {
        let start = monotonicNanoseconds()
        while monotonicNanoseconds() - start < nanoseconds {}
    }

    /// Between writes: `.adaptive` dates them with the coarse clock (ticks of up to 4 ms).
    static let gap: UInt64 = 10_000_000

    static func listed(_ level: MemoryCacheLevel<String, Data>) -> [String: KeyInspection] {
        Dictionary(uniqueKeysWithValues: level.inspectKeys(limit: 100_000).map { ($0.key, $0) })
    }

    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func ageRunsFromTheLastWriteAndHitsLeaveIt(policy: EvictionPolicy) async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 20, policy: policy)
        try level.store(Data("1".utf8), forKey: "old")
        Self.passes(Self.gap)
        try level.store(Data("2".utf8), forKey: "new")
        for _ in 0..<100 { _ = level.value(forKey: "old") }
        var keys = Self.listed(level)
        let old = try #require(keys["old"]?.age), new = try #require(keys["new"]?.age)
        #expect(old >= new + .milliseconds(5), "hits did not move the write time: old \(old), new \(new)")
        #expect(new < .seconds(60))
        // Rewritten (same size: in place under both policies), "old" is now the youngest.
        Self.passes(Self.gap)
        try level.store(Data("3".utf8), forKey: "old")
        keys = Self.listed(level)
        #expect(try #require(keys["old"]?.age) < #require(keys["new"]?.age))
        // A back-fill is a write too.
        Self.passes(Self.gap)
        try await level.backfill(Backfill(value: Data("4".utf8), expiresAt: nil), forKey: "new")
        keys = Self.listed(level)
        #expect(try #require(keys["new"]?.age) < #require(keys["old"]?.age))
    }

    @Test func lruCountsEveryHitAndPeeksNone() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 20, policy: .lru)
        for key in ["a", "b", "c"] { try level.store(Data(key.utf8), forKey: key) }
        for _ in 0..<7 { _ = level.value(forKey: "a") }
        // Back to back on the list's head: the hits that log no read count too.
        for _ in 0..<3 { _ = level.value(forKey: "c") }
        for _ in 0..<5 { _ = level.peek("b") }
        _ = level.value(forKey: "missing")
        var keys = Self.listed(level)
        #expect(keys.mapValues(\.hits) == ["a": 7, "b": 0, "c": 3])
        try level.store(Data("A".utf8), forKey: "a")
        keys = Self.listed(level)
        #expect(keys["a"]?.hits == 7, "hits count since the key entered the level: a rewrite keeps them")
        level.removeValue(forKey: "a")
        try level.store(Data("a".utf8), forKey: "a")
        #expect(Self.listed(level)["a"]?.hits == 0, "a key removed and set again starts at 0")
    }

    @Test func adaptiveCountsHitsWhenTheyDrainIntoThePolicy() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 20, policy: .adaptive)
        for key in ["a", "b"] { try level.store(Data(key.utf8), forKey: key) }
        for _ in 0..<40 { _ = level.value(forKey: "a") }
        for _ in 0..<3 { _ = level.value(forKey: "b") }
        // Single-threaded nothing is dropped: a write drains every buffer.
        try level.store(Data("c".utf8), forKey: "c")
        let keys = Self.listed(level)
        #expect(keys.mapValues(\.hits) == ["a": 40, "b": 3, "c": 0])
    }

    /// A level of 8,000 keys whose hottest sit in the shards walked last:
    /// ranking the first 5,000 listed (the explorer's listing) missed them.
    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func hotKeysAreTheWholeLevelsTopN(policy: EvictionPolicy) async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 30, policy: policy)
        for i in 0..<8_000 { try level.store(Data(count: 1), forKey: "key:\(i)") }
        let order = level.inspectKeys(limit: 8_000).map(\.key)
        // The last five listed, hit 12, 10, 8, 6 and 4 times; 200 early ones
        // once each, one after each hot hit (the sketch counts a key asked
        // again at once as one use).
        let hot = Array(order.suffix(5))
        var fillers = order.prefix(200).makeIterator()
        for round in 0..<12 {
            for (rank, key) in hot.enumerated() where round < 12 - 2 * rank {
                _ = level.value(forKey: key)
                _ = fillers.next().map { level.value(forKey: $0) }
            }
        }
        while let filler = fillers.next() { _ = level.value(forKey: filler) }
        try level.store(Data(count: 1), forKey: "drain")  // applies buffered hits (adaptive)
        let inspector = try #require(level.levelInspector)
        let ranked = try await inspector.hotKeys(5)
        #expect(ranked.keys.map(\.key) == hot, "\(ranked.keys)")
        #expect(ranked.keys.map(\.hits) == [12, 10, 8, 6, 4])
        #expect(ranked.isWholeLevel && ranked.examined == 8_001)
        let sampled = LevelInspector<String, Data>.hottest(Array(try await inspector.keys(5_000)), count: 5)
        #expect(Set(sampled.map(\.key)).isDisjoint(with: hot), "the first 5,000 listed hold none of them")
        #expect(try await inspector.hotKeys(0).keys.isEmpty)
        #expect(try await inspector.hotKeys(50).keys.count == 50, "five hot and 200 hit once: the top 50")
    }

    @Test func hotKeysSkipExpiredAndUnrequestedKeys() async throws {
        let clock = TestClock()
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 20, policy: .lru, clock: clock)
        try level.store(Data(count: 1), forKey: "cold")
        try level.store(Data(count: 1), forKey: "hit", expiresAt: clock.now().advanced(by: .seconds(5)))
        try level.store(Data(count: 1), forKey: "kept")
        for _ in 0..<3 { _ = level.value(forKey: "hit") }
        _ = level.value(forKey: "kept")
        #expect(level.hotKeys(5).keys.map(\.key) == ["hit", "kept"], "a key never hit is not hot")
        clock.advance(by: .seconds(6))
        let ranked = level.hotKeys(5)
        #expect(ranked.keys.map(\.key) == ["kept"] && ranked.examined == 2, "an expired key is neither ranked nor counted")
    }

    /// Ranking while readers hit and writers evict: one shard lock at a time,
    /// no deadlock with the policy lock, every answer sorted and bounded.
    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func rankingWhileReadersAndWritersRunStaysConsistent(policy: EvictionPolicy) async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 16, countLimit: 400, policy: policy)
        // Threads, not tasks: three synchronous loops of 20,000 operations
        // held the cooperative pool's two threads for ~20 s in a full run.
        let failedStores = Atomic<Int>(0), tooMany = Atomic<Int>(0), unordered = Atomic<Int>(0), cold = Atomic<Int>(0)
        await onThreads(4) { worker in
            guard worker < 3 else {
                for _ in 0..<300 {
                    let ranked = level.hotKeys(10)
                    if !(ranked.keys.count <= 10 && ranked.examined <= 600) { tooMany.add(1, ordering: .relaxed) }
                    if !zip(ranked.keys, ranked.keys.dropFirst()).allSatisfy({ !KeyInspection.isHotter($1, $0) }) {
                        unordered.add(1, ordering: .relaxed)
                    }
                    if !ranked.keys.allSatisfy({ $0.isHot }) { cold.add(1, ordering: .relaxed) }
                }
                return
            }
            for i in 0..<20_000 {
                let key = "k\((i * 7 + worker) % 600)"
                if i % 4 == 0 {
                    do { try level.store(Data(count: 8), forKey: key) } catch { failedStores.add(1, ordering: .relaxed) }
                } else {
                    _ = level.value(forKey: key)
                }
            }
        }
        #expect(failedStores.load(ordering: .relaxed) == 0)
        #expect(tooMany.load(ordering: .relaxed) == 0, "600 keys are ever written")
        #expect(unordered.load(ordering: .relaxed) == 0, "rankings out of order")
        #expect(cold.load(ordering: .relaxed) == 0, "rankings with keys never requested")
        #expect(level.hotKeys(10).keys.count == 10)
    }

    /// The bounded heap against a full sort, on random input (duplicates included).
    @Test func topHeapKeepsTheHighestLikeASort() {
        var random = SystemRandomNumberGenerator()
        for round in 0..<500 {
            let values = (0..<Int.random(in: 0...60, using: &random)).map { _ in Int.random(in: 0...20, using: &random) }
            let limit = round % 12
            var heap = TopHeap<Int>(limit: limit, isHigher: >)
            for value in values { heap.offer(value) }
            #expect(heap.sorted() == Array(values.sorted(by: >).prefix(limit)), "\(values) limit \(limit)")
        }
    }
}
