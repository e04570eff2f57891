import Foundation
@testable import Strata
import Synchronization
import Testing

/// A gated level whose entries expire an hour after `clock.now()`.
final class ClockedGatedLevel: ExpirableCacheLevel, @unchecked Sendable {
    func removeExpired() async -> Int { 0 }
    typealias Key = String
    typealias Value = String
    let clock: any CacheClock
    let gate: Gate
    let gets = Atomic(0)
    /// Throw this instead of CancellationError when cancelled (a URLSession-like origin).
    let cancelledAs: (any Error)?
    /// Stores by UTF-8 bytes (like Redis or a file name).
    private let storage = Mutex<[[UInt8]: String]>([:])
    init(clock: any CacheClock = SystemClock(), gate: Gate, cancelledAs: (any Error)? = nil, _ data: [String: String]) {
        self.clock = clock; self.gate = gate; self.cancelledAs = cancelledAs
        storage.withLock { s in for (k, v) in data { s[Array(k.utf8)] = v } }
    }
    func entry(forKey key: String) async throws -> CacheEntry<String>? {
        gets.add(1, ordering: .relaxed)
        let deadline = clock.now().advanced(by: .seconds(3600))  // as the read begins
        do { try await gate.wait() } catch { throw cancelledAs ?? error }
        guard let value = storage.withLock({ $0[Array(key.utf8)] }) else { return nil }
        return CacheEntry(value: value, expiresAt: deadline)
    }
    func getIfPresent(_ key: String) async throws -> String? { try await entry(forKey: key)?.value }
    func set(_ value: String, forKey key: String) async throws { storage.withLock { $0[Array(key.utf8)] = value } }
    func remove(_ key: String) async throws { _ = storage.withLock { $0.removeValue(forKey: Array(key.utf8)) } }
    func clear() async { storage.withLock { $0.removeAll() } }
    func onMemoryWarning() async {}
}

/// An upper level that records each back-fill's read start.
final class RecordingLevel: CacheLevel, @unchecked Sendable {
    typealias Key = String
    typealias Value = String
    let fills = Mutex<[ContinuousClock.Instant?]>([])
    func getIfPresent(_ key: String) async throws -> String? { nil }
    func set(_ value: String, forKey key: String) async throws {}
    func backfill(_ fill: Backfill<String>, forKey key: String) async throws { fills.withLock { $0.append(fill.readStartedAt) } }
    func remove(_ key: String) async throws {}
    func clear() async {}
    func onMemoryWarning() async {}
}

/// Single flight, from a review (each failed before its fix): expiry is
/// judged on the levels' clock, a cancelled leader never fails a joiner
/// whatever error its read ends with, keys are told apart by their bytes,
/// and a joined answer carries the leader's effective read start.
@Suite struct StackSingleFlightReviewTests {
    /// Area 3: a joiner judges expiry on SystemClock, the level on its TestClock.
    @Test func aJoinerOfALevelWithAnInjectedClockIsAnsweredItsLiveEntry() async throws {
        let clock = TestClock()  // 2023-11-14, behind the wall clock
        let gate = Gate()
        let origin = ClockedGatedLevel(clock: clock, gate: gate, ["k": "v"])
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock) + origin
        let leader = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.gets.load(ordering: .relaxed) == 1 })
        let joiner = Task { try await cache.getIfPresent("k") }
        #expect(await poll { cache.readsJoined == 1 })
        gate.open()
        #expect(try await leader.value == "v")
        #expect(try await joiner.value == "v", "the entry is valid for an hour on the level's clock")
    }

    /// Area 3: the entry expired (on the level's clock) before the joiner arrived.
    @Test func aJoinerIsNotAnsweredAnEntryThatExpiredOnTheLevelsClockBeforeItArrived() async throws {
        let clock = TestClock(CacheInstant(nanosecondsSince1970: 1_900_000_000_000_000_000))  // 2030: ahead of the wall clock
        let gate = Gate()
        let origin = ClockedGatedLevel(clock: clock, gate: gate, ["k": "v"])
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock) + origin
        let leader = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.gets.load(ordering: .relaxed) == 1 })
        clock.advance(by: .seconds(7200))  // the entry (1 h) has expired
        let arrival = clock.now()
        let joiner = Task { try await cache.entry(forKey: "k") }
        #expect(await poll { cache.readsJoined == 1 })
        gate.open()
        _ = try await leader.value
        let answer = try await joiner.value
        #expect(answer == nil || answer!.expiresAt! > arrival, "answered \(String(describing: answer)) at \(arrival)")
    }

    /// Area 3: a leader cancelled while its origin reports cancellation as another error.
    @Test func aCancelledLeaderWhoseOriginThrowsItsOwnErrorDoesNotFailTheJoiner() async throws {
        let gate = Gate()
        let origin = ClockedGatedLevel(gate: gate, cancelledAs: URLError(.cancelled), ["k": "v"])
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + origin
        let leader = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.gets.load(ordering: .relaxed) == 1 })
        let joiner = Task { try await cache.getIfPresent("k") }
        #expect(await poll { cache.readsJoined == 1 })
        leader.cancel()
        _ = await Result { try await leader.value }
        gate.open()
        let answer = await Result { try await joiner.value }
        #expect((try? answer.get()) == "v", "joiner: \(answer)")
    }

    /// Area 4: keys Swift calls equal that the level stores apart.
    @Test func canonicallyEquivalentKeysThatTheLevelKeepsApartAreNotJoined() async throws {
        let gate = Gate()
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        let origin = ClockedGatedLevel(gate: gate, [:])
        try await origin.set("nfc", forKey: nfc); try await origin.set("nfd", forKey: nfd)
        let upper = ClockedGatedLevel(gate: Gate(), [:])
        upper.gate.open()
        let cache = upper + origin
        let first = Task { try await cache.getIfPresent(nfc) }
        #expect(await poll { origin.gets.load(ordering: .relaxed) == 1 })
        let second = Task { try await cache.getIfPresent(nfd) }
        _ = await poll(timeout: .milliseconds(300)) { cache.readsJoined == 1 }
        gate.open()
        #expect(try await first.value == "nfc")
        #expect(try await second.value == "nfd")
    }

    /// Area 2: an outer stack's back-fill after joining an inner flight whose
    /// leader's answer came from an older (pooled) read.
    @Test func aJoinedAnswerCarriesTheLeadersEffectiveReadStart() async throws {
        let gate = Gate()
        let origin = ClockedGatedLevel(gate: gate, ["k": "v"])
        let pool = origin.pooled()
        let inner = MemoryCacheLevel<String, String>(capacity: 1 << 20) + pool
        let recorder = RecordingLevel()
        let outer = recorder + inner
        let direct = Task { try await pool.getIfPresent("k") }         // the pooled read begins
        #expect(await poll { origin.gets.load(ordering: .relaxed) == 1 })
        let t0 = ContinuousClock.now  // the pooled read began before this
        try await Task.sleep(for: .milliseconds(200))  // the time passing is the condition: the inner leader joins later
        let innerLeader = Task { try await inner.getIfPresent("k") }    // inner's flight: joins the pool at t0+200ms
        #expect(await poll { pool.waiterCount(for: "k") == 2 })
        let outerGet = Task { try await outer.getIfPresent("k") }       // joins inner's flight
        #expect(await poll { inner.readsJoined == 1 })
        gate.open()
        _ = try await (direct.value, innerLeader.value, outerGet.value)
        await outer.waitForPendingWrites()
        let fills = recorder.fills.withLock { $0 }
        #expect(fills.count == 1)
        if let started = fills.first ?? nil {
            #expect(started <= t0, "back-fill judged as read at +\(started - t0), after the pooled read began")
        }
    }

    /// Area 3: flights return to 0 after cancellations of leaders and joiners.
    @Test func flightsDoNotLeak() async throws {
        let gate = Gate()
        let origin = ClockedGatedLevel(gate: gate, ["k": "v"])
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + origin
        let tasks = (0..<20).map { _ in Task { try await cache.getIfPresent("k") } }
        #expect(await poll { cache.readsJoined >= 19 })
        for (i, t) in tasks.enumerated() where i % 2 == 0 { t.cancel() }
        gate.open()
        for t in tasks { _ = await Result { try await t.value } }
        #expect(cache.stack.flights.inFlight == 0)
    }

    /// Area 5: hops on a nested stack's miss path.
    @Test func nestedStackMissesHopNowhere() async throws {
        let caller = Caller()
        let cache = MemoryCacheLevel<String, String>(capacity: 10)
            + (MemoryCacheLevel<String, String>(capacity: 10) + BasicFetcher<String, String> { "v:\($0)" })
        let hops = try await caller.getMany(cache, keys: (0..<100).map { "n\($0)" })
        #expect(hops == 0, "\(hops) hops for 100 misses")
        let pooled = MemoryCacheLevel<String, String>(capacity: 10) + BasicFetcher<String, String> { "v:\($0)" }.pooled()
        let pooledHops = try await caller.getMany(pooled, keys: (0..<100).map { "p\($0)" })
        print("pooled hops: \(pooledHops)")
    }
}
