import Foundation
@testable import Strata
import Synchronization
import StrataTestSupport
import Testing

/// Review of #33 (fail-safe, timeouts, refresh ahead): each test shows a defect.
@Suite(.serialized) struct ResilienceReviewTests {
    /// A level whose removes, clears and next synchronous read can be held.
    final class GatedLevel: CacheLevel, Sendable {
        struct State {
            var values: [String: String] = [:]
            var failing = false
            var removeGate: Gate?
            var clearGate: Gate?
            var holdNextSynchronousRead = false
        }
        let state = Mutex(State())
        /// The held synchronous read has read its value and waits for `release`.
        let synchronousReadHeld = Atomic<Bool>(false)
        let release = DispatchSemaphore(value: 0)
        var name: String { "gated" }
        struct Down: Error {}

        subscript(key: String) -> String? {
            get { state.withLock { $0.values[key] } }
            set { state.withLock { $0.values[key] = newValue } }
        }
        func fail(_ failing: Bool) { state.withLock { $0.failing = failing } }

        func getIfPresent(_ key: String) async throws -> String? {
            let (value, failing) = state.withLock { ($0.values[key], $0.failing) }
            if failing { throw Down() }
            return value
        }
        /// A memory-like level: answers without suspending. When held, it
        /// reads the value, then waits (with a deadline) for `release`,
        /// blocking its thread: run the read on an ``OwnThreadExecutor``.
        func synchronousValue(forKey key: String) -> String? {
            let (value, hold) = state.withLock { state -> (String?, Bool) in
                if state.failing { return (nil, false) }
                defer { state.holdNextSynchronousRead = false }
                return (state.values[key], state.holdNextSynchronousRead)
            }
            if hold {
                synchronousReadHeld.store(true, ordering: .sequentiallyConsistent)
                // Asleep, not spinning: a busy wait took one of the two cores
                // from every other test for as long as this one waited.
                _ = release.wait(timeout: .now() + 30)
            }
            return value
        }
        func set(_ value: String, forKey key: String) async throws {
            if state.withLock({ $0.failing }) { throw Down() }
            self[key] = value
        }
        func remove(_ key: String) async throws {
            let gate = state.withLock { state -> Gate? in defer { state.removeGate = nil }; return state.removeGate }
            try await gate?.wait()
            self[key] = nil
        }
        func clear() async {
            let gate = state.withLock { state -> Gate? in defer { state.clearGate = nil }; return state.clearGate }
            try? await gate?.wait()
            state.withLock { $0.values = [:] }
        }
        func onMemoryWarning() async {}
    }

    // MARK: 1. ResilientCache.entry(forKey:) synchronous path takes its ticket after reading

    @Test func aSynchronousHitReadBeforeASetIsNotRecordedOverTheNewValue() async throws {
        let level = GatedLevel()
        level["k"] = "v1"
        let cache = level.failSafe(maxStale: .seconds(600))
        level.state.withLock { $0.holdNextSynchronousRead = true }
        // Held by a blocking wait: off the shared pool, or every test running
        // beside it waits too (the Redis suite's subscriptions timed out).
        let read = Task(executorPreference: OwnThreadExecutor()) { try await cache.getIfPresent("k") }
        #expect(await poll { level.synchronousReadHeld.load(ordering: .sequentiallyConsistent) })
        // The hit has read "v1"; a set through the cache now replaces it, alone.
        try await cache.set("v2", forKey: "k")
        level.release.signal()
        #expect(try await read.value == "v1")
        #expect(level["k"] == "v2")
        level.fail(true)
        // "v1" was set over through this cache: it must never be the fallback.
        #expect(try await cache.getIfPresent("k") == "v2", "the overwritten value came back as the fallback")
    }

    // MARK: 2. a read overlapping invalidate(.key) through the cache records the value being removed

    @Test func aKeyInvalidatedThroughTheCacheIsNotRelearntFromTheLevelsBeforeItsRemovalLands() async throws {
        let level = GatedLevel()
        level["k"] = "v1"
        let cache = level.failSafe(maxStale: .seconds(600))
        #expect(try await cache.getIfPresent("k") == "v1")
        let gate = Gate()
        level.state.withLock { $0.removeGate = gate }
        let invalidation = Task { try await cache.invalidate(.key("k")) }
        #expect(await poll { gate.waiting == 1 })
        #expect(try await cache.getIfPresent("k") == "v1", "a read overlapping the invalidation")
        gate.open()
        try await invalidation.value
        #expect(level["k"] == nil)
        level.fail(true)
        await #expect(throws: GatedLevel.Down.self, "the invalidated (removed) value came back as the fallback") {
            try await cache.getIfPresent("k")
        }
    }

    // MARK: 3. invalidate(.all) forgets only before the clear (clear() forgets before and after)

    @Test func aReadOverlappingInvalidateAllDoesNotRecordTheClearedValue() async throws {
        let level = GatedLevel()
        level["k"] = "v1"
        let cache = level.failSafe(maxStale: .seconds(600))
        #expect(try await cache.getIfPresent("k") == "v1")
        let gate = Gate()
        level.state.withLock { $0.clearGate = gate }
        let invalidation = Task { try await cache.invalidate(.all) }
        #expect(await poll { gate.waiting == 1 })
        #expect(try await cache.getIfPresent("k") == "v1", "a read overlapping the clear")
        gate.open()
        try await invalidation.value
        #expect(level["k"] == nil)
        level.fail(true)
        await #expect(throws: GatedLevel.Down.self, "a cleared value came back as the fallback") {
            try await cache.getIfPresent("k")
        }
    }

    // MARK: 4. LastKnownValues: `order` grows by one per set of the same key, forever

    final class LiveToken: Sendable {
        static let live = Atomic<Int>(0)
        init() { Self.live.add(1, ordering: .sequentiallyConsistent) }
        deinit { Self.live.subtract(1, ordering: .sequentiallyConsistent) }
    }

    /// Equal by `id`; each instance keeps a token alive while held.
    struct CountedKey: Hashable, Sendable {
        let id: Int
        let token = LiveToken()
        static func == (a: Self, b: Self) -> Bool { a.id == b.id }
        func hash(into hasher: inout Hasher) { hasher.combine(id) }
    }

    @Test func setsOfOneKeyKeepTheLastKnownValuesBounded() async throws {
        let known = LastKnownValues<CountedKey, String>(capacity: 10_000)
        let now = CacheInstant(nanosecondsSince1970: 0)
        let before = LiveToken.live.load(ordering: .sequentiallyConsistent)
        for step in 0..<5_000 {
            // What every `set` through a ResilientCache does (beginWrite, write, endWrite).
            let key = CountedKey(id: 1)
            let ticket = known.beginWrite(key)
            known.endWrite("v\(step)", forKey: key, ticket: ticket, at: now)
        }
        #expect(known.count == 1)
        let held = LiveToken.live.load(ordering: .sequentiallyConsistent) - before
        #expect(held <= 64, "one key, one value: \(held) key copies held by the FIFO order")
    }

    // MARK: 5. refresh ahead: a refresh dropped by the tracker's limit leaves its key in `refreshing` forever

    @Test func aRefreshDroppedAtTheLimitDoesNotStopLaterRefreshesOfItsKey() async throws {
        let f = ResilienceTests.Fixture(ttl: .seconds(600))
        let cache = f.stack.refreshAhead(at: 0.5)
        let gate = Gate()
        let holding = Atomic<Bool>(false)
        let load: @Sendable (String) async throws -> String = { key in
            if holding.load(ordering: .relaxed) { try await gate.wait() }
            return "\(key) loaded"
        }
        let count = 1_025  // one past BackfillTracker's limit of refreshes in flight
        for index in 0..<count { _ = try await cache.get("k\(index)", ttl: .seconds(10), load: load) }
        f.clock.advance(by: .seconds(6))
        holding.store(true, ordering: .relaxed)
        for index in 0..<count { _ = try await cache.get("k\(index)", ttl: .seconds(10), load: load) }
        #expect(await poll { gate.waiting == count - 1 })
        holding.store(false, ordering: .relaxed)
        gate.open()
        await cache.waitForPendingWrites()
        #expect(cache.resilienceStatistics.refreshesStarted == count - 1)
        // The last key's refresh was dropped; a later hit past the fraction must start one.
        _ = try await cache.get("k\(count - 1)", ttl: .seconds(10), load: load)
        await cache.waitForPendingWrites()
        #expect(cache.resilienceStatistics.refreshesStarted == count, "the key is stuck in `refreshing`: never refreshed again")
    }

    // MARK: 6. refresh ahead writes the upper level only: an older value comes back after a newer one

    @Test func afterARefreshAheadTheOlderValueNeverComesBack() async throws {
        let clock = TestClock()
        let upper = MemoryCacheLevel<String, String>(capacity: 1 << 20, defaultTTL: .seconds(600), clock: clock)
        let lower = MemoryCacheLevel<String, String>(capacity: 1 << 20, defaultTTL: .seconds(600), clock: clock)
        let cache = (upper + lower).refreshAhead(at: 0.8)
        let loads = Atomic<Int>(0)
        let load: @Sendable (String) async throws -> String = { key in "\(key) #\(loads.add(1, ordering: .relaxed).newValue)" }
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #1")
        clock.advance(by: .seconds(9))
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #1")  // starts the refresh
        await cache.waitForPendingWrites()
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #2")
        upper.removeAll()  // evicted (capacity, memory pressure) before the old deadline
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #2",
                "\"k #1\" was answered after \"k #2\": the lower level still holds the replaced value")
    }

    // MARK: 7. refresh ahead in a three-level stack: the replaced value is nowhere after it

    /// (Reworked after the fix: a refresh replaces in every level; a level
    /// that cannot compare values, like this shared one, forgets the key.)
    @Test func afterARefreshAheadInAThreeLevelStackNoLevelAnswersTheReplacedValue() async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20, defaultTTL: .seconds(600), clock: clock)
        let shared = ResilienceTests.Origin()  // a store other processes may write: default replace
        let origin = ResilienceTests.Origin()
        let cache = (memory + shared + origin).refreshAhead(at: 0.8)
        let loads = Atomic<Int>(0)
        let load: @Sendable (String) async throws -> String = { key in "\(key) #\(loads.add(1, ordering: .relaxed).newValue)" }
        _ = try await cache.get("k", ttl: .seconds(10), load: load)
        await cache.waitForPendingWrites()
        #expect(shared["k"] == "k #1")
        clock.advance(by: .seconds(9))
        _ = try await cache.get("k", ttl: .seconds(10), load: load)
        await cache.waitForPendingWrites()
        #expect(cache.resilienceStatistics.refreshesStarted == 1)
        #expect(memory.value(forKey: "k") == "k #2")
        #expect(shared["k"] != "k #1" && origin["k"] != "k #1", "the replaced value is still held below")
        memory.removeAll()
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) != "k #1")
    }

    // MARK: 8. a fail-safe answers the value its own refresh replaced

    @Test func aFailSafeDoesNotAnswerTheValueItsRefreshReplaced() async throws {
        let f = ResilienceTests.Fixture(ttl: .seconds(600))
        let cache = f.stack.failSafe(maxStale: .seconds(600)).refreshAhead(at: 0.8)
        let loads = Atomic<Int>(0)
        let down = Atomic<Bool>(false)
        let load: @Sendable (String) async throws -> String = { key in
            if down.load(ordering: .relaxed) { throw ResilienceTests.Origin.Down() }
            return "\(key) #\(loads.add(1, ordering: .relaxed).newValue)"
        }
        #expect(try await cache.get("k", ttl: .seconds(10), load: load) == "k #1")
        f.clock.advance(by: .seconds(9))
        _ = try await cache.get("k", ttl: .seconds(10), load: load)  // hit, refresh to "k #2"
        await cache.waitForPendingWrites()
        #expect(loads.load(ordering: .relaxed) == 2)
        f.memory.removeAll()
        f.origin.fail(true)
        down.store(true, ordering: .relaxed)
        let answer = try? await cache.get("k", ttl: .seconds(10), load: load)
        #expect(answer != "k #1", "the fallback is the value this cache's own refresh replaced")
    }
}
