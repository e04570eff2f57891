import Foundation
@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// `stack.get(key, ttl:, load:)`, `get(key, load:)` with ``Loaded`` and
/// `getAll(keys, ttl:, load:)` (``ComposedCache``): one load per key across
/// concurrent callers, stored with its TTL in every level, never landing
/// over a write made while it ran.
@Suite struct LoadThroughTests {
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
        func next() -> Int { value.add(1, ordering: .relaxed).newValue }
        var count: Int { value.load(ordering: .relaxed) }
    }

    @Test func concurrentMissesOfOneKeyLoadOnceAndEveryLevelKeepsTheValueWithItsTTL() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let disk = try DiskCacheLevel<String, String>(name: "d", directory: dir.url, capacity: 1 << 20)
        let stack = memory + disk
        let loads = Counter(), gate = Gate()
        let before = SystemClock().now()
        let answers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await stack.get("user:7", ttl: .seconds(60)) { key in
                        _ = loads.next()
                        try await gate.wait()
                        return "loaded \(key)"
                    }
                }
            }
            #expect(await poll { gate.waiting == 1 && stack.stack.loads.joined == 99 })
            gate.open()
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(loads.count == 1, "\(loads.count) loads for 100 concurrent misses")
        #expect(answers.count == 100 && Set(answers) == ["loaded user:7"])
        #expect(memory.value(forKey: "user:7") == "loaded user:7")
        let stored = try #require(try await disk.entry(forKey: "user:7"))
        #expect(stored.value == "loaded user:7")
        let deadline = try #require(stored.expiresAt)
        #expect(deadline >= before.advanced(by: .seconds(59)) && deadline <= SystemClock().now().advanced(by: .seconds(60)))
        // Kept: the next get is a hit.
        #expect(try await stack.get("user:7", ttl: .seconds(60)) { _ in _ = loads.next(); return "again" } == "loaded user:7")
        #expect(loads.count == 1)
    }

    @Test func theLoadersOwnTTLDecidesWhenItIsAskedAgain() async throws {
        let clock = TestClock()
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock)
            + MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock)
        let loads = Counter()
        let load: @Sendable (String) async throws -> Loaded<String> = { _ in .value("v\(loads.next())", ttl: .seconds(5)) }
        #expect(try await stack.get("k", load: load) == "v1")
        clock.advance(by: .seconds(4))
        #expect(try await stack.get("k", load: load) == "v1")
        clock.advance(by: .seconds(2))
        #expect(try await stack.get("k", load: load) == "v2", "kept past the loader's TTL")
    }

    @Test func notFoundIsRememberedForItsTTLUntilTheKeyIsWritten() async throws {
        let clock = TestClock()
        let lower = FakeLevel<String, String>(name: "shared")
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock) + lower
        let loads = Counter()
        let load: @Sendable (String) async throws -> Loaded<String> = { _ in _ = loads.next(); return .notFound(ttl: .seconds(10)) }
        #expect(try await stack.get("k", load: load) == nil)
        #expect(try await stack.get("k", load: load) == nil)
        #expect(loads.count == 1, "a remembered miss asked the loader again")
        clock.advance(by: .seconds(11))
        #expect(try await stack.get("k", load: load) == nil)
        #expect(loads.count == 2, "a miss was remembered past its TTL")
        // A write through the stack forgets it.
        try await stack.set("set", forKey: "k")
        try await stack.remove("k")
        #expect(try await stack.get("k", load: load) == nil)
        #expect(loads.count == 3, "a miss outlived a write of the key")
        // So does a change reported from below (another process wrote it).
        await lower.changeElsewhere("k", to: nil)
        #expect(try await stack.get("k", load: load) == nil)
        #expect(loads.count == 4, "a miss outlived a change reported from below")
        // Without a TTL nothing is remembered.
        #expect(try await stack.get("j") { _ in _ = loads.next(); return .notFound(ttl: nil) } == nil)
        #expect(try await stack.get("j") { _ in _ = loads.next(); return .notFound(ttl: nil) } == nil)
        #expect(loads.count == 6)
    }

    /// A load that began before a write through the stack returns what it
    /// loaded (it overlapped the write) but does not land over the write.
    @Test(arguments: ["set", "remove", "clear"])
    func aLoadDoesNotLandOverAWriteMadeWhileItRan(_ write: String) async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let lower = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let stack = memory + lower
        let gate = Gate()
        let read = Task { try await stack.get("k", ttl: nil) { _ in try await gate.wait(); return "old" } }
        #expect(await yieldUntil { gate.waiting == 1 })
        switch write {
        case "set": try await stack.set("new", forKey: "k")
        case "remove": try await stack.remove("k")
        default: await stack.clear()
        }
        gate.open()
        #expect(try await read.value == "old")
        let expected: String? = write == "set" ? "new" : nil
        #expect(memory.value(forKey: "k") == expected && lower.value(forKey: "k") == expected,
                "after \(write): \(String(describing: memory.value(forKey: "k"))) above, \(String(describing: lower.value(forKey: "k"))) below")
    }

    @Test func aFailingLevelIsPassedOverAndTheLoaderAnswers() async throws {
        let lower = FakeLevel<String, String>(name: "shared")
        lower.failGets(with: TestError("down"))
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20) + lower
        #expect(try await stack.get("k", ttl: nil) { _ in "loaded" } == "loaded")
    }

    @Test func getAllLoadsOnlyTheMissingKeysInOneCall() async throws {
        let memory = MemoryCacheLevel<Int, String>(capacity: 1 << 20)
        let lower = MemoryCacheLevel<Int, String>(capacity: 1 << 20)
        try await lower.set("two", forKey: 2)
        try await memory.set("one", forKey: 1)
        let stack = memory + lower
        let asked = Mutex<[[Int]]>([])
        let answer = try await stack.getAll([1, 2, 3, 4, 3], ttl: .seconds(60)) { keys in
            asked.withLock { $0.append(keys) }
            return [3: "three", 99: "not asked"]  // 4: not found
        }
        #expect(answer == [1: "one", 2: "two", 3: "three"])
        #expect(asked.withLock { $0 } == [[3, 4]], "the loader was asked \(asked.withLock { $0 })")
        #expect(memory.value(forKey: 3) == "three" && lower.value(forKey: 3) == "three")
        #expect(memory.value(forKey: 99) == nil && lower.value(forKey: 99) == nil)
        let again = try await stack.getAll([1, 2, 3], ttl: .seconds(60)) { keys in
            asked.withLock { $0.append(keys) }
            return [:]
        }
        #expect(again == [1: "one", 2: "two", 3: "three"])
        #expect(asked.withLock { $0.count } == 1, "every key was held: the loader is not asked")
    }

    /// Keys loaded together with a jitter do not all expire together.
    @Test func jitterSpreadsTheDeadlinesWithinItsBound() async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<Int, String>(capacity: 1 << 20, clock: clock)
        let stack = memory + MemoryCacheLevel<Int, String>(capacity: 1 << 20, clock: clock)
        let start = clock.now()
        for key in 0..<50 { _ = try await stack.get(key, ttl: .seconds(60), jitter: .seconds(10)) { "v\($0)" } }
        _ = try await stack.getAll(Array(50..<100), ttl: .seconds(60), jitter: .seconds(10)) { keys in
            Dictionary(uniqueKeysWithValues: keys.map { ($0, "v\($0)") })
        }
        let deadlines = (0..<100).compactMap { memory.storedEntry(forKey: $0)?.expiresAt }
        #expect(deadlines.count == 100)
        #expect(deadlines.allSatisfy { $0 >= start.advanced(by: .seconds(60)) && $0 <= start.advanced(by: .seconds(70)) })
        #expect(Set(deadlines).count > 50, "\(Set(deadlines).count) distinct deadlines for 100 keys")
    }
}

/// A get that arrives while a load is landing (its back-fill into a slow
/// lower level, such as Redis, is under way) joins that load; it started a
/// second load, calling the loader again (found with 50 gets through
/// `memory + redis`: two database calls for one key).
@Suite struct LoadLandingJoinTests {
    /// A lower level whose back-fills wait for `gate` (then, if
    /// `declinesWhenHeld`, are declined when it holds the key, as Redis's `SET NX`).
    struct SlowBackfillLevel: CacheLevel {
        let store = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let gate = Gate()
        var declinesWhenHeld = false
        func getIfPresent(_ key: String) async throws -> String? { try await store.getIfPresent(key) }
        func set(_ value: String, forKey key: String) async throws { try await store.set(value, forKey: key) }
        func backfill(_ fill: Backfill<String>, forKey key: String) async throws {
            try await gate.wait()
            if declinesWhenHeld && store.contains(key) { throw BackfillDeclined() }
            try await store.backfill(fill, forKey: key)
        }
        func remove(_ key: String) async throws { try await store.remove(key) }
        func clear() async { await store.clear() }
        func onMemoryWarning() async {}
    }

    @Test func aGetArrivingWhileTheLoadLandsJoinsItInsteadOfLoadingAgain() async throws {
        let lower = SlowBackfillLevel()
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20) + lower
        let loads = LoadThroughTests.Counter()
        let load: @Sendable (String) async throws -> String = { "v\(loads.next()) for \($0)" }
        let first = Task { try await stack.get("k", ttl: .seconds(60), load: load) }
        #expect(await poll { lower.gate.waiting == 1 }, "the load is landing")
        let second = Task { try await stack.get("k", ttl: .seconds(60), load: load) }
        #expect(await poll { stack.loadsJoined == 1 }, "the second get joined the landing load")
        lower.gate.open()
        #expect(try await first.value == "v1 for k")
        #expect(try await second.value == "v1 for k")
        #expect(loads.count == 1, "\(loads.count) loader calls")
    }
}

/// A load whose landing the lower level declines (it holds a value written
/// since the load began, by another client: Redis's `SET NX` or a
/// tombstone) is the leader's answer (its get overlapped that write), but not
/// its joiners': they may have begun after the write, so they read again and
/// get the newer value (review of #32.1; they got the loaded one before).
@Suite struct DeclinedLandingTests {
    @Test func joinersOfALoadWhoseLandingWasDeclinedReadTheNewerValue() async throws {
        let lower = LoadLandingJoinTests.SlowBackfillLevel(declinesWhenHeld: true)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let stack = memory + lower
        let loads = LoadThroughTests.Counter()
        let load: @Sendable (String) async throws -> String = { _ in "v\(loads.next())" }
        let first = Task { try await stack.get("k", ttl: .seconds(60), load: load) }
        #expect(await poll { lower.gate.waiting == 1 }, "the load is landing")
        let second = Task { try await stack.get("k", ttl: .seconds(60), load: load) }
        #expect(await poll { stack.loadsJoined == 1 }, "the second get joined the landing load")
        try await lower.store.set("newer", forKey: "k")  // another client, unreported
        lower.gate.open()
        #expect(try await first.value == "v1", "the leader's get overlapped the write")
        #expect(try await second.value == "newer", "a joiner got the load the store declined")
        #expect(loads.count == 1)
        #expect(await poll { memory.value(forKey: "k") == "newer" })
    }
}

/// A loading get that misses counts one miss in the upper level, not two:
/// it looks at the upper level again before it loads only if a write or a
/// landing through the stack ended since its miss (found by the explorer's
/// panes: a load showed two misses in L1, halving the hit ratio shown).
@Suite struct LoadMissCountTests {
    @Test func aLoadCountsOneMissInTheUpperLevel() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "L1")
        let stack = memory + MemoryCacheLevel<String, String>(capacity: 1 << 20)
        #expect(try await stack.get("k", ttl: .seconds(60), load: { _ in "v" }) == "v")
        #expect(try await stack.get("k", ttl: .seconds(60), load: { _ in "w" }) == "v")
        let counts = memory.statistics.snapshot()
        #expect(counts.misses == 1, "\(counts.misses) misses for one load")
        #expect(counts.hits == 1)
        #expect(counts.gets == 2)
    }

    /// A set that ends between a get's miss and its load is what the get
    /// finds when it looks again: the loader is not called, the set stays.
    @Test func aSetEndingBetweenTheMissAndTheLoadIsFoundInstead() async throws {
        let lower = HeldFirstReadLevel()
        let stack = MemoryCacheLevel<String, String>(capacity: 1 << 20) + lower
        let loads = LoadThroughTests.Counter()
        let get = Task { try await stack.get("k", ttl: .seconds(60), load: { _ in "loaded \(loads.next())" }) }
        #expect(await poll { lower.gate.waiting == 1 }, "the get's read of the lower level is held")
        try await stack.set("set", forKey: "k")
        lower.gate.open()
        #expect(try await get.value == "set")
        #expect(loads.count == 0)
        #expect(try await stack.get("k") == "set")
    }

    /// A level whose first read answers what it held when the read began,
    /// once its gate opens.
    final class HeldFirstReadLevel: CacheLevel {
        let store = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let gate = Gate()
        let first = Atomic<Bool>(true)
        var name: String { "held" }
        func getIfPresent(_ key: String) async throws -> String? {
            let value = try await store.getIfPresent(key)
            if first.exchange(false, ordering: .relaxed) { try await gate.wait() }
            return value
        }
        func set(_ value: String, forKey key: String) async throws { try await store.set(value, forKey: key) }
        func remove(_ key: String) async throws { try await store.remove(key) }
        func clear() async { await store.clear() }
        func onMemoryWarning() async {}
    }
}

/// A loading get answered by the top level's synchronous read counts as the
/// async get would: one hit on an instrumented top level (one get, one
/// event when observed), nothing below, the loader never called; a miss
/// counts one miss, not two.
@Suite struct LoadingGetFastPathTests {
    @Test func aSynchronousHitOnAnInstrumentedTopCountsOnceAndAMissOnce() async throws {
        let top = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "L1")
        let below = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "L2")
        let stack = top + below
        let loads = Atomic<Int>(0)
        let load: @Sendable (String) async throws -> String = { key in loads.add(1, ordering: .relaxed); return "v-\(key)" }
        try await top.set("held", forKey: "k")
        #expect(try await stack.get("k", ttl: .seconds(60), load: load) == "held")
        #expect(loads.load(ordering: .relaxed) == 0)
        var l1 = top.statistics.snapshot(), l2 = below.statistics.snapshot()
        #expect(l1.gets == 1 && l1.hits == 1 && l1.misses == 0, "\(l1)")
        #expect(l2.gets == 0)
        #expect(try await stack.get("other", ttl: .seconds(60), load: load) == "v-other")
        await stack.waitForPendingWrites()
        l1 = top.statistics.snapshot(); l2 = below.statistics.snapshot()
        #expect(l1.gets == 2 && l1.hits == 1 && l1.misses == 1, "a miss counted once: \(l1)")
        #expect(l2.gets == 1 && l2.misses == 1)
        #expect(loads.load(ordering: .relaxed) == 1)
    }

    @Test func anObservedOrTracedHitIsReportedOnce() async throws {
        let top = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "L1")
        let stack = top + MemoryCacheLevel<String, String>(capacity: 1 << 20)
        try await top.set("held", forKey: "k")
        let trace = RequestTrace()
        let value = try await trace.record { try await stack.get("k", ttl: .seconds(60)) { _ in "loaded" } }
        #expect(value == "held")
        let hits = trace.events.filter { $0.level == "L1" && $0.outcome == .hit }
        #expect(hits.count == 1, "\(trace.events)")
        #expect(top.statistics.snapshot().hits == 1)
    }
}
