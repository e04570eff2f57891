import Strata
import StrataTestSupport
import Synchronization
import Testing

/// A shared level's reports of changes made elsewhere drop the key from every
/// level above it, through wrappers and nested compositions (issue 9, core).
@Suite struct InvalidationTests {
    @Test func aKeyChangedElsewhereIsDroppedFromTheLevelAbove() async throws {
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let shared = FakeLevel<String, Int>(name: "shared", ["user:7": 1])
        let cache = memory + shared
        #expect(try await cache.get("user:7") == 1)
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "user:7") == 1)

        await shared.changeElsewhere("user:7", to: 2)
        #expect(memory.value(forKey: "user:7") == nil)
        #expect(try await cache.get("user:7") == 2)
        #expect(cache.invalidationsApplied == 1)
    }

    /// In `(memory + disk) + shared`, a change `shared` reports makes the
    /// composition remove the key from memory and disk; the disk level
    /// reports that remove (as it reports every change, for other processes)
    /// in a task of its own. That report is the composition's own doing and
    /// must not void a read begun after it: before, when it came late, the
    /// next get's back-fill was dropped now and then (a second read of the
    /// shared level for nothing; a flaky Redis test showed it).
    @Test func theDropOfAReportedKeyDoesNotVoidTheNextReadsBackfill() async throws {
        let directory = TemporaryDirectory("strata-echo"); defer { directory.remove() }
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let disk = try DiskCacheLevel<String, Int>(directory: directory.url, capacity: 1 << 20)
        let shared = FakeLevel<String, Int>(name: "shared")
        let cache = memory + disk + shared
        var dropped = 0
        for round in 0..<200 {
            let key = "k\(round % 8)"
            await shared.changeElsewhere(key, to: round)
            #expect(try await cache.get(key) == round)
            await cache.waitForPendingWrites()
            if memory.value(forKey: key) != round { dropped += 1 }
        }
        #expect(dropped == 0, "\(dropped) of 200 back-fills dropped; \(cache.backfillsSkipped) skipped")
    }

    @Test func aFlushElsewhereClearsTheLevelsAbove() async throws {
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let shared = FakeLevel<String, Int>(name: "shared")
        let cache = memory + shared
        for i in 0..<10 { try await cache.set(i, forKey: "k\(i)") }
        await shared.flushElsewhere()
        #expect(memory.count == 0)
        await #expect(throws: FetchError.valueNotInCache) { try await cache.get("k3") }
    }

    @Test func invalidationsReachEveryLevelAboveThroughNestingAndWrappers() async throws {
        let top = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let middle = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let shared = FakeLevel<String, Int>(name: "shared", ["a": 1])
        // Right-nested, left-nested and with wrappers in between.
        let right = top + (middle.conditioned { _ in true } + shared.mapValues({ $0 }, inverse: { $0 }))
        #expect(try await right.get("a") == 1)
        await right.waitForPendingWrites()
        #expect(top.value(forKey: "a") == 1 && middle.value(forKey: "a") == 1)
        await shared.changeElsewhere("a", to: 5)
        #expect(top.value(forKey: "a") == nil && middle.value(forKey: "a") == nil)

        let top2 = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let middle2 = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let shared2 = FakeLevel<String, Int>(name: "shared2", ["b": 1])
        let left = (top2 + middle2).normalize() + shared2
        #expect(try await left.get("b") == 1)
        await left.waitForPendingWrites()
        await shared2.changeElsewhere("b", to: nil)
        #expect(top2.value(forKey: "b") == nil && middle2.value(forKey: "b") == nil)
        await #expect(throws: FetchError.valueNotInCache) { try await left.get("b") }
    }

    @Test func anInvalidationDuringAReadDropsItsBackfill() async throws {
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let shared = FakeLevel<String, Int>(name: "shared", ["k": 1])
        let cache = memory + shared
        let gate = Gate()
        shared.holdGets(on: gate)
        shared.readBeforeHolding(true)
        async let read = cache.get("k")
        #expect(await poll { shared.callCounts.gets == 1 }, "the read reaches the shared level")
        // Another client changes the key while our read of the old value is in flight.
        await shared.changeElsewhere("k", to: 2)
        gate.open()
        #expect(try await read == 1)  // the answer of a read that began before the change
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "k") == nil, "a back-fill of the old value landed after the invalidation")
        shared.holdGets(on: nil)
        #expect(try await cache.get("k") == 2)
    }

    @Test func aKeyMappedLevelReportsAnyChangeAsEverything() async throws {
        let memory = MemoryCacheLevel<Int, Int>(capacity: 1 << 20)
        let shared = FakeLevel<String, Int>(name: "shared", ["1": 1])
        let cache = memory + shared.mapKeys { (key: Int) in String(key) }
        #expect(try await cache.get(1) == 1)
        try await cache.set(2, forKey: 2)
        await shared.changeElsewhere("1", to: 3)
        #expect(memory.count == 0)
        #expect(try await cache.get(1) == 3)
    }
}

extension InvalidationTests {
    /// A pool below the memory level (`memory + shared.pooled()`) or at the
    /// top (`(memory + shared).pooled()`, nothing above it listening): a get
    /// that starts after a change reported by the shared store must not join
    /// a read of the old value from before it.
    @Test(arguments: [false, true])
    func aPooledReadStartedBeforeAChangeElsewhereIsNotSharedAfterIt(poolOnTop: Bool) async throws {
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 20)
        let shared = FakeLevel<String, Int>(name: "shared", ["k": 1])
        let cache: any CacheLevel<String, Int> = poolOnTop ? (memory + shared).pooled() : memory + shared.pooled()
        let gate = Gate()
        shared.holdGets(on: gate)
        shared.readBeforeHolding(true)
        async let first = cache.get("k")
        #expect(await poll { shared.callCounts.gets == 1 }, "the first read reaches the shared level")
        await shared.changeElsewhere("k", to: 2)
        // A get that starts after the change must not join the read of the old value.
        async let second = cache.get("k")
        #expect(await poll { shared.callCounts.gets == 2 }, "the second get started its own read")
        gate.open()
        #expect(try await first == 1)
        #expect(try await second == 2)
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "k") != 1)
    }
}

extension InvalidationTests {
    /// 8 tasks of gets, sets and removes through `memory + shared` while 2
    /// "other clients" change the shared level behind its back; afterwards the
    /// memory level holds no value the shared level lacks.
    @Test func concurrentChangesElsewhereKeepTheLevelAboveCoherent() async throws {
        let memory = MemoryCacheLevel<String, Int>(capacity: 1 << 30)
        let shared = FakeLevel<String, Int>(name: "shared")
        let cache = memory + shared
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var rng = SplitMix64(seed: UInt64(worker + 1))
                    for op in 0..<2_000 {
                        let key = "k\(rng.next() % 64)"
                        switch rng.next() % 10 {
                        case 0..<6: _ = try await cache.getIfPresent(key)
                        case 6..<9: try await cache.set(worker * 1_000_000 + op, forKey: key)
                        default: try await cache.remove(key)
                        }
                    }
                }
            }
            for client in 0..<2 {
                group.addTask {
                    var rng = SplitMix64(seed: UInt64(100 + client))
                    for op in 0..<2_000 {
                        let key = "k\(rng.next() % 64)"
                        await shared.changeElsewhere(key, to: rng.next() % 4 == 0 ? nil : -(client * 1_000_000 + op))
                    }
                }
            }
            try await group.waitForAll()
        }
        await cache.waitForPendingWrites()
        for key in (0..<64).map({ "k\($0)" }) {
            if let above = memory.value(forKey: key) {
                #expect(above == shared.contents[key], "\(key): \(above) above, \(String(describing: shared.contents[key])) in the shared level")
            }
        }
    }
}

extension InvalidationTests {
    /// `memory + shared + origin`: a read from the origin began, then the
    /// data changed and another process removed the key from the shared
    /// store. The origin's old answer must not be written back into the
    /// shared store (every process would serve it) nor into memory.
    @Test func aBackfillIntoASharedLevelIsDroppedWhenTheSharedLevelReportsAChange() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let shared = FakeLevel<String, String>(name: "shared")
        let origin = SnapshotOrigin()
        try await origin.set("old", forKey: "k")
        let cache = memory + shared + origin
        let read = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 1 }, "the read reached the origin")
        try await origin.set("new", forKey: "k")  // the data changes…
        await shared.changeElsewhere("k", to: nil)  // …and another process removes the key from the shared store
        origin.open()
        #expect(try await read.value == "old")  // the answer of a read that began before the change
        await cache.waitForPendingWrites()
        #expect(shared.contents["k"] == nil, "the old value was written back into the shared store after the change")
        #expect(memory.value(forKey: "k") == nil, "the old value was written back into memory after the change")
        #expect(try await cache.getIfPresent("k") == "new")
    }
}
