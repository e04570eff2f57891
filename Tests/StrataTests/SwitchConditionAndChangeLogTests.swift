import Strata
import Synchronization
import Testing

/// A shared store that declines a back-fill when it holds the key (like
/// Redis's `SET NX`); another process's write is `writeElsewhere` (not reported).
private final class DecliningStore: CacheLevel {
    typealias Key = String
    typealias Value = String
    let name = "shared"
    let storage = Mutex<[String: String]>([:])
    func writeElsewhere(_ key: String, _ value: String) { storage.withLock { $0[key] = value } }
    func getIfPresent(_ key: String) async throws -> String? { storage.withLock { $0[key] } }
    func set(_ value: String, forKey key: String) async throws {
        storage.withLock { $0[key] = value }
    }
    func backfill(_ fill: Backfill<String>, forKey key: String) async throws {
        try storage.withLock { storage in
            if storage[key] != nil { throw BackfillDeclined() }
            storage[key] = fill.value
        }
    }
    func set(_ value: String, forKey key: String, expiresAt: CacheInstant?) async throws { try await set(value, forKey: key) }
    func remove(_ key: String) async throws { _ = storage.withLock { $0.removeValue(forKey: key) } }
    func clear() async { storage.withLock { $0.removeAll() } }
    func onMemoryWarning() async {}
}

/// A level whose removes fail (a store that is down for writes).
private func failingRemoves(_ name: String) -> BasicCache<String, String> {
    BasicCache(name: name, getIfPresent: { _ in nil }, set: { _, _ in },
               remove: { _ in throw TestError("\(name): remove failed") }, clear: {}, onMemoryWarning: {})
}

@Suite struct SwitchConditionAndChangeLogTests {
    /// A switch's set whose chosen lane fails while the other lane's remove
    /// fails too: the switch cleans the chosen lane itself, since a
    /// composition above takes its `LevelsFailedError` for "already cleaned".
    @Test func aSwitchWhoseSetAndOtherLaneRemoveBothFailKeepsNoOlderValue() async throws {
        let a = FakeLevel<String, String>(name: "a", ["k": "old"])
        let origin = FakeLevel<String, String>(name: "origin", ["k": "old"])
        let cache = switchLevels(cacheA: a, cacheB: failingRemoves("b")) { _ in .cacheA } + origin
        a.failSets(with: TestError("a: set failed"))
        await #expect(throws: LevelsFailedError.self) { try await cache.set("new", forKey: "k") }
        a.failSets(with: nil)
        #expect(origin.contents["k"] == "new")
        #expect(try await cache.get("k") == "new", "lane a kept the value the failed set replaced")
    }

    /// A back-fill the switch's shared lane declines comes out of the switch
    /// as `BackfillDeclined`, whatever the other lane does, so the level above
    /// does not take the value the shared store turned down.
    @Test func aDeclineInsideASwitchStillKeepsTheLevelAboveEmpty() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let shared = DecliningStore()
        let origin = FakeLevel<String, String>(name: "origin", ["k": "old"])
        let gate = Gate()
        origin.holdGets(on: gate)
        let cache = memory + switchLevels(cacheA: shared, cacheB: failingRemoves("b")) { _ in .cacheA } + origin
        let read = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.callCounts.gets == 1 })
        shared.writeElsewhere("k", "new")  // another process, after this read began
        gate.open()
        _ = try await read.value
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "k") == nil, "memory took the back-fill the shared store declined")
        #expect(try await cache.get("k") == "new")
    }

    /// A remove failing on both lanes is reported as a failed remove.
    @Test func aSwitchRemoveFailingOnBothLanesIsReportedAsARemove() async throws {
        let lanes = switchLevels(cacheA: failingRemoves("a"), cacheB: failingRemoves("b")) { _ in .cacheA }
        do {
            try await lanes.remove("k")
            Issue.record("expected a failure")
        } catch let error as LevelsFailedError {
            #expect(error.operation == .remove, "reported as \(error.operation)")
        }
    }

    /// A back-fill a condition turns away removes nothing (a DEL per miss on
    /// a shared store): sets and removes already keep the level free of
    /// older values.
    @Test func aMissThroughASkippedLevelDoesNotRemoveFromIt() async throws {
        let top = FakeLevel<String, Int>(name: "top")
        let cache = top.conditioned { _ in false } + FakeLevel<String, Int>(name: "origin", ["k": 1])
        #expect(try await cache.get("k") == 1)
        await cache.waitForPendingWrites()
        #expect(top.callCounts.removes == 0, "a back-fill removed from the skipped level")
    }

    /// The same for a switch's other lane.
    @Test func aBackfillIntoASwitchDoesNotRemoveFromTheOtherLane() async throws {
        let a = FakeLevel<String, Int>(name: "a"), b = FakeLevel<String, Int>(name: "b")
        let cache = switchLevels(cacheA: a, cacheB: b) { _ in .cacheA } + FakeLevel<String, Int>(name: "origin", ["k": 1])
        #expect(try await cache.get("k") == 1)
        await cache.waitForPendingWrites()
        #expect(a.contents["k"] == 1)
        #expect(b.callCounts.removes == 0, "a back-fill removed from the other lane")
    }

    /// The change log remembers keys, not changes: one hot key changed 4,097
    /// times while a read of another key is in flight does not drop that
    /// read's back-fill.
    @Test func aHotKeyChangedOftenDoesNotDropAnotherKeysBackfill() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let shared = FakeLevel<String, String>(name: "shared")
        let origin = FakeLevel<String, String>(name: "origin", ["k": "v"])
        let gate = Gate()
        origin.holdGets(on: gate)
        let cache = memory + shared + origin
        let read = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.callCounts.gets == 1 })
        for i in 0..<4097 { await shared.changeElsewhere("hot", to: "\(i)") }
        gate.open()
        #expect(try await read.value == "v")
        await cache.waitForPendingWrites()
        #expect(shared.contents["k"] == "v", "the back-fill of k was dropped for changes to one other key")
    }
}
