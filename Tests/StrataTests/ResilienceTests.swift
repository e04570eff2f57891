import Foundation
@testable import Strata
import Synchronization
import Testing

/// `failSafe(maxStale:softTimeout:hardTimeout:)` and `refreshAhead(at:)`
/// (``ResilientCache``): the last known value when the levels fail or are
/// late, never one known to be replaced; refreshes that keep hot keys hitting.
@Suite struct ResilienceTests {
    /// An origin that can fail, hold its reads at a gate, and report changes.
    final class Origin: CacheLevel, Sendable {
        struct State {
            var values: [String: String] = [:]
            var failing = false
            var gate: Gate?
            /// Held after storing, by the next set only.
            var setGate: Gate?
            var reads = 0
        }
        let state = Mutex(State())
        let listeners = InvalidationListeners<String>()
        var name: String { "origin" }

        subscript(key: String) -> String? {
            get { state.withLock { $0.values[key] } }
            set { state.withLock { $0.values[key] = newValue } }
        }
        func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }
        func hold(_ gate: Gate?) { state.withLock { $0.gate = gate } }
        var reads: Int { state.withLock { $0.reads } }

        struct Down: Error {}

        func getIfPresent(_ key: String) async throws -> String? {
            // The value as of the read's start: a slow read answers what it saw.
            let (value, failing, gate) = state.withLock { state in
                state.reads += 1
                return (state.values[key], state.failing, state.gate)
            }
            try await gate?.wait()
            if failing || state.withLock({ $0.failing }) { throw Down() }
            return value
        }
        func set(_ value: String, forKey key: String) async throws {
            if state.withLock({ $0.failing }) { throw Down() }
            await Task.yield()  // writes overlap more often
            let gate = state.withLock { state in
                state.values[key] = value
                defer { state.setGate = nil }
                return state.setGate
            }
            try await gate?.wait()
        }
        func remove(_ key: String) async throws { self[key] = nil }
        func clear() async { state.withLock { $0.values = [:] } }
        func onMemoryWarning() async {}
        func subscribe(_ listener: @escaping @Sendable (CacheChange<String>) async -> Void) -> CacheSubscription {
            listeners.add(listener)
        }
    }

    struct Fixture {
        let clock = TestClock()
        let memory: MemoryCacheLevel<String, String>
        let origin = Origin()
        init(ttl: Duration = .seconds(1)) {
            memory = MemoryCacheLevel(capacity: 1 << 20, defaultTTL: ttl, clock: clock)
        }
        var stack: ComposedCache<MemoryCacheLevel<String, String>, Origin> { memory + origin }
    }

    @Test func aFailingOriginAnswersTheLastKnownValueUpToMaxStaleThenThrows() async throws {
        let f = Fixture()
        let cache = f.stack.failSafe(maxStale: .seconds(60))
        f.origin["k"] = "v1"
        #expect(try await cache.get("k") == "v1")
        await cache.waitForPendingWrites()
        f.clock.advance(by: .seconds(2))  // memory's entry expired
        f.origin.fail(true)
        let trace = RequestTrace()
        let stale = try await trace.record { try await cache.get("k") }
        #expect(stale == "v1")
        #expect(trace.events.contains { $0.outcome == .stale && $0.key == "k" }, "\(trace.events)")
        #expect(cache.resilienceStatistics.staleAnswers == 1)
        #expect(f.memory.contains("k") == false, "a stale answer was back-filled as fresh")
        f.clock.advance(by: .seconds(58))  // seen 60 s ago
        #expect(try await cache.get("k") == "v1")
        f.clock.advance(by: .seconds(1) + .nanoseconds(1))
        await #expect(throws: FetchError.self) { try await cache.get("k") }
        // A key never seen has no fallback.
        await #expect(throws: FetchError.self) { try await cache.get("other") }
    }

    @Test func aRemovedClearedOrOverwrittenValueNeverComesBackAsStale() async throws {
        let f = Fixture()
        let cache = f.stack.failSafe(maxStale: .seconds(600))
        for key in ["a", "b", "c"] { f.origin[key] = "old \(key)" }
        for key in ["a", "b", "c"] { _ = try await cache.get(key) }
        try await cache.remove("a")
        try await cache.set("new b", forKey: "b")
        f.origin.fail(true)
        f.memory.removeAll()
        await #expect(throws: FetchError.self) { try await cache.get("a") }
        #expect(try await cache.get("b") == "new b")
        #expect(try await cache.get("c") == "old c")
        await cache.clear()
        await #expect(throws: FetchError.self) { try await cache.get("c") }
        // A miss is an answer: the key is gone, nothing to fall back on later.
        f.origin.fail(false)
        f.origin["d"] = "d1"
        _ = try await cache.get("d")
        await cache.waitForPendingWrites()
        f.origin["d"] = nil
        f.memory.removeAll()
        #expect(try await cache.getIfPresent("d") == nil)
        f.origin.fail(true)
        await #expect(throws: FetchError.self) { try await cache.get("d") }
    }

    @Test func aChangeReportedFromBelowForgetsTheValueButLostContactKeepsIt() async throws {
        let f = Fixture()
        let cache = f.stack.failSafe(maxStale: .seconds(600))
        f.origin["a"] = "a1"
        f.origin["b"] = "b1"
        _ = try await cache.get("a")
        _ = try await cache.get("b")
        await f.origin.listeners.publish(.contactLost)
        await f.origin.listeners.publish(.key("a"))
        f.origin.fail(true)
        f.memory.removeAll()
        await #expect(throws: FetchError.self) { try await cache.get("a") }
        #expect(try await cache.get("b") == "b1", "contact lost is not a change: the fallback stays")
        await f.origin.listeners.publish(.all)
        await #expect(throws: FetchError.self) { try await cache.get("b") }
    }

    @Test func aReadThatOverlappedASetDoesNotRecordWhatItSaw() async throws {
        let f = Fixture()
        let cache = f.stack.failSafe(maxStale: .seconds(600))
        f.origin["k"] = "v1"
        let gate = Gate()
        f.origin.hold(gate)
        let read = Task { try await cache.get("k") }
        #expect(await poll { gate.waiting == 1 })
        f.origin.hold(nil)
        try await cache.set("v2", forKey: "k")
        gate.open()
        #expect(try await read.value == "v1", "the read saw the value before the set")
        await cache.waitForPendingWrites()
        f.memory.removeAll()
        f.origin.fail(true)
        #expect(try await cache.get("k") == "v2", "the overwritten value came back as the fallback")
    }

    @Test func twoOverlappingSetsRecordNeitherValue() async throws {
        let origin = Origin()
        let cache = origin.failSafe(maxStale: .seconds(600))
        let gate = Gate()
        origin.state.withLock { $0.setGate = gate }
        let first = Task { try await cache.set("first", forKey: "k") }  // stored, then held
        #expect(await poll { gate.waiting == 1 })
        try await cache.set("second", forKey: "k")  // stored over it, done first
        gate.open()
        try await first.value
        #expect(origin["k"] == "second")
        origin.fail(true)
        // The sets finished in the other order than they were applied: the
        // last to finish is not the value held, so neither is remembered.
        let error = await #expect(throws: FetchError.self) { try await cache.get("k") }
        #expect(error?.cause(as: Origin.Down.self) != nil)
    }

    @Test func aSlowOriginBehindASoftTimeoutAnswersStaleAtOnceAndTheFreshValueLands() async throws {
        let f = Fixture()
        let cache = f.stack.failSafe(maxStale: .seconds(600), softTimeout: .milliseconds(50), hardTimeout: .seconds(30))
        f.origin["k"] = "v1"
        _ = try await cache.get("k")
        await cache.waitForPendingWrites()
        f.clock.advance(by: .seconds(2))
        f.origin["k"] = "v2"
        let gate = Gate()
        f.origin.hold(gate)
        let started = ContinuousClock.now
        #expect(try await cache.get("k") == "v1")
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(50) && waited < .seconds(10), "\(waited)")
        #expect(cache.resilienceStatistics.softTimeouts == 1)
        gate.open()
        #expect(await poll { f.memory.contains("k") }, "the read finished in the background and back-filled")
        f.origin.hold(nil)
        #expect(try await cache.get("k") == "v2")
    }

    @Test func pastTheHardTimeoutAGetWithoutFallbackThrowsATimeoutNamingLevelAndKey() async throws {
        let f = Fixture()
        let cache = f.stack.failSafe(maxStale: .seconds(600), softTimeout: .milliseconds(10), hardTimeout: .milliseconds(100))
        f.origin["k"] = "v1"
        let gate = Gate()
        f.origin.hold(gate)
        do {
            _ = try await cache.get("k")
            Issue.record("no timeout")
        } catch let error as FetchError {
            #expect(error.cause(as: CacheTimeout.self) != nil)
            #expect(error.description.contains("get k") && error.description.contains("memory + origin"), "\(error)")
        }
        #expect(cache.resilienceStatistics.hardTimeouts == 1)
        gate.open()
        #expect(await poll { f.memory.contains("k") })
    }

    @Test func aCancelledCallerStopsWaitingAndTheReadGoesOn() async throws {
        let f = Fixture()
        let cache = f.stack.failSafe(maxStale: .seconds(600), hardTimeout: .seconds(60))
        f.origin["k"] = "v1"
        let gate = Gate()
        f.origin.hold(gate)
        let read = Task { try await cache.get("k") }
        #expect(await poll { gate.waiting == 1 })
        read.cancel()
        await #expect(throws: CancellationError.self) { try await read.value }
        gate.open()
        #expect(await poll { f.memory.contains("k") })
    }

    @Test func refreshAheadLoadsOnceBeforeExpiryAndHotKeysNeverMiss() async throws {
        let f = Fixture(ttl: .seconds(600))
        let cache = f.stack.refreshAhead(at: 0.8)
        let loads = Atomic<Int>(0)
        let load: @Sendable (String) async throws -> String = { key in
            "\(key) #\(loads.add(1, ordering: .relaxed).newValue)"
        }
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #1")
        f.clock.advance(by: .seconds(7))
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #1")
        #expect(cache.resilienceStatistics.refreshesStarted == 0, "refreshed before 80% of the TTL")
        f.clock.advance(by: .seconds(2))  // 9 s of 10
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await cache.get("k", ttl: .seconds(10), load: load) } }
            for try await answer in group { #expect(answer == "k #1" || answer == "k #2") }
        }
        await cache.waitForPendingWrites()
        #expect(loads.load(ordering: .relaxed) == 2, "one refresh for 50 hits")
        f.clock.advance(by: .seconds(2))  // past the first deadline
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #2", "a miss at expiry")
        #expect(loads.load(ordering: .relaxed) == 2)
        let statistics = cache.resilienceStatistics
        #expect(statistics.refreshesStarted == 1 && statistics.refreshesFailed == 0 && statistics.refreshesDropped == 0)
    }

    @Test func aRefreshOverlappedByASetIsDroppedNotLandedOverIt() async throws {
        let f = Fixture(ttl: .seconds(600))
        let cache = f.stack.refreshAhead(at: 0.5)
        let gate = Gate()
        let calls = Atomic<Int>(0)
        let load: @Sendable (String) async throws -> String = { _ in
            if calls.add(1, ordering: .relaxed).newValue == 2 { try await gate.wait() }
            return "loaded"
        }
        _ = try await cache.get("k", ttl: .seconds(10), load: load)
        f.clock.advance(by: .seconds(6))
        _ = try await cache.get("k", ttl: .seconds(10), load: load)
        #expect(await poll { gate.waiting == 1 })
        try await cache.set("user's", forKey: "k")
        gate.open()
        await cache.waitForPendingWrites()
        #expect(cache.resilienceStatistics.refreshesDropped == 1)
        #expect(try await cache.get("k") == "user's")
        #expect(f.origin["k"] == "user's")
    }

    @Test func failSafeAroundLoadingGetsAnswersStaleWhenTheLoaderFails() async throws {
        let f = Fixture()
        let cache = f.stack.failSafe(maxStale: .seconds(600))
        let down = Atomic<Bool>(false)
        let load: @Sendable (String) async throws -> String = { key in
            if down.load(ordering: .relaxed) { throw Origin.Down() }
            return "db \(key)"
        }
        #expect(try await cache.get("k", ttl: .seconds(1), load: load) == "db k")
        f.clock.advance(by: .seconds(2))
        down.store(true, ordering: .relaxed)
        f.origin.fail(true)  // the store below fails too: the loader is asked, and fails
        #expect(try await cache.get("k", ttl: .seconds(1), load: load) == "db k")
        #expect(cache.resilienceStatistics.staleAnswers == 1)
    }

    /// Sets, removes and reads of a few keys at once, reads failing at
    /// random: once quiet, every last known value is the one the levels hold.
    @Test func underConcurrentWritesAndReadsTheFallbackIsAlwaysTheLevelsValue() async throws {
        let f = Fixture(ttl: .seconds(600))
        let cache = f.stack.failSafe(maxStale: .seconds(600))
        let keys = (0..<3).map { "k\($0)" }
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(worker))
                    for step in 0..<400 {
                        let key = keys[Int(random.next() % UInt64(keys.count))]
                        switch random.next() % 4 {
                        case 0: try? await cache.set("w\(worker)-\(step)", forKey: key)
                        case 1: try? await cache.remove(key)
                        case 2: f.memory.removeAll()
                        default: _ = try? await cache.get(key)
                        }
                    }
                }
            }
        }
        await cache.waitForPendingWrites()
        let now = f.clock.now()
        for key in keys {
            if let known = cache.known?.value(forKey: key, maxStale: .seconds(600), now: now) {
                #expect(known.value == f.origin[key], "\(key): fallback \(known.value), levels \(f.origin[key] ?? "nothing")")
            }
        }
    }
}

/// Refresh ahead is judged on when the value was loaded, not on the hit's
/// entry: a level above with a TTL shorter than the load's caps the entry's
/// deadline, which made every hit look due and started a load per hit.
@Suite struct RefreshAheadUnderAShorterLevelTTLTests {
    @Test func hitsOnALevelWithAShorterTTLStartNoRefreshBeforeTheFraction() async throws {
        let f = ResilienceTests.Fixture(ttl: .seconds(1))  // memory keeps 1 s; the loads 10 s
        let shared = MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: f.clock)  // keeps the loads' deadlines
        let cache = (f.memory + shared).refreshAhead(at: 0.8)
        let loads = Atomic<Int>(0)
        let load: @Sendable (String) async throws -> String = { key in
            "\(key) #\(loads.add(1, ordering: .relaxed).newValue)"
        }
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #1")
        for _ in 0..<20 {
            #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #1")
            await cache.waitForPendingWrites()
        }
        #expect(loads.load(ordering: .relaxed) == 1, "a load per hit on the 1 s level")
        f.clock.advance(by: .seconds(5))  // memory expired; the level below has it for 5 s more
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #1")
        await cache.waitForPendingWrites()
        #expect(loads.load(ordering: .relaxed) == 1, "refreshed at 50% of the load's TTL")
        f.clock.advance(by: .seconds(3.5))  // 8.5 s of 10: due
        _ = try await cache.get("k", ttl: .seconds(10), load: load)
        await cache.waitForPendingWrites()
        #expect(loads.load(ordering: .relaxed) == 2)
        #expect(cache.resilienceStatistics.refreshesStarted == 1)
        // The refreshed value is due 8 s after it landed, not on the next hit.
        for _ in 0..<5 {
            #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #2")
            await cache.waitForPendingWrites()
        }
        #expect(loads.load(ordering: .relaxed) == 2)
    }

    @Test func aSetThroughTheCacheForgetsWhenTheKeyWasLoaded() async throws {
        let f = ResilienceTests.Fixture(ttl: .seconds(600))
        let cache = f.stack.refreshAhead(at: 0.8)
        let loads = Atomic<Int>(0)
        let load: @Sendable (String) async throws -> String = { key in
            "\(key) #\(loads.add(1, ordering: .relaxed).newValue)"
        }
        _ = try await cache.get("k", ttl: .seconds(100), load: load)
        f.clock.advance(by: .seconds(50))
        // Set with a deadline 10 s away: due at 8 s of it, whenever the key was loaded.
        try await cache.set("set", forKey: "k", expiresAt: f.clock.now().advanced(by: .seconds(10)))
        f.clock.advance(by: .seconds(9))
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "set")
        await cache.waitForPendingWrites()
        #expect(loads.load(ordering: .relaxed) == 2, "the set value was not refreshed before its deadline")
    }
}
