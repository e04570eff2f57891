import Strata
import Synchronization
import Testing

/// Batches reach levels that can answer many keys in one round trip, through
/// compositions, wrappers, erasure and generic code.
@Suite struct ComposedBatchTests {
    /// A level that answers batches in one call and records every batch it got.
    final class BatchStore: CacheLevel, Sendable {
        let stored: Mutex<[String: String]>
        let batches = Mutex<[[String]]>([])
        let singleGets = Atomic<Int>(0)
        init(_ initial: [String: String]) { stored = Mutex(initial) }
        func getIfPresent(_ key: String) async throws -> String? {
            singleGets.add(1, ordering: .relaxed)
            return stored.withLock { $0[key] }
        }
        func entries(forKeys keys: [String], maxConcurrency: Int?) async -> [CacheEntry<String>?] {
            batches.withLock { $0.append(keys) }
            return stored.withLock { s in keys.map { s[$0].map { CacheEntry(value: $0) } } }
        }
        func set(_ value: String, forKey key: String) async throws { stored.withLock { $0[key] = value } }
        func remove(_ key: String) async throws { _ = stored.withLock { $0.removeValue(forKey: key) } }
        func clear() async {}
        func onMemoryWarning() async {}
    }

    static func keys(_ range: Range<Int>) -> [String] { range.map { "k\($0)" } }

    /// Generic code outside the library reaches the level's own batch read.
    static func fetchAll<C: CacheLevel>(_ cache: C, _ keys: [String]) async -> [String: String]
    where C.Key == String, C.Value == String {
        await cache.batchGetSome(keys)
    }

    @Test func compositionAsksEachLevelOnlyForTheKeysStillMissing() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        for key in Self.keys(0..<10) { try await memory.set("m", forKey: key) }
        let shared = BatchStore(Dictionary(uniqueKeysWithValues: Self.keys(10..<20).map { ($0, "s") }))
        let origin = BatchStore(Dictionary(uniqueKeysWithValues: Self.keys(0..<30).map { ($0, "o") }))
        let cache = memory + shared.instrumented(name: "shared") + origin
        let all = Self.keys(0..<30)
        let found = await Self.fetchAll(cache, all + ["k0", "k29"])  // duplicates fetched once
        #expect(found.count == 30)
        #expect(Self.keys(0..<10).allSatisfy { found[$0] == "m" })
        #expect(Self.keys(10..<20).allSatisfy { found[$0] == "s" })
        #expect(Self.keys(20..<30).allSatisfy { found[$0] == "o" })
        #expect(shared.batches.withLock { $0 } == [Self.keys(10..<30)], "shared level: one batch of the 20 keys memory lacked")
        #expect(origin.batches.withLock { $0 } == [Self.keys(20..<30)], "origin: one batch of the 10 keys both lacked")
        #expect(shared.singleGets.load(ordering: .relaxed) == 0 && origin.singleGets.load(ordering: .relaxed) == 0)
        await cache.waitForPendingWrites()
        #expect(Self.keys(10..<30).allSatisfy { memory.value(forKey: $0) != nil }, "found keys are back-filled")
    }

    @Test func erasedAndWrappedLevelsKeepTheBatch() async throws {
        let store = BatchStore(["a": "1", "b": "2", "skip:c": "3"])
        let erased: any CacheLevel<String, String> = store.conditioned { !$0.hasPrefix("skip:") }.normalize().capRequests(1)
        let found = await erased.entries(forKeys: ["a", "b", "skip:c", "x"], maxConcurrency: 4)
        #expect(found.map { $0?.value } == ["1", "2", nil, nil])
        #expect(store.batches.withLock { $0 } == [["a", "b", "x"]], "the skipped key was not asked")
        let upper = store.mapKeys { (key: Int) in "k\(key)" }.postProcess { $0.uppercased() }
        try await store.set("v", forKey: "k7")
        #expect(await upper.batchGetSome([7, 8]) == [7: "V"])
    }
}
