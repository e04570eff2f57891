import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Audit of "no value outlives its TTL, and no removed or overwritten value
/// comes back" across compositions. Every test here failed on the code it was
/// written against; each names the sequence that breaks the guarantee.
@Suite struct AuditTTLTests {
    /// A level over a memory level whose reads take the entry first and then
    /// wait on a gate before answering (a reply already on its way).
    final class SlowReadLevel<Key: Hashable & Sendable, Value: Sendable>: CacheLevel {
        let store: MemoryCacheLevel<Key, Value>
        let gate = Mutex<Gate?>(nil)

        init(_ store: MemoryCacheLevel<Key, Value>) { self.store = store }

        func hold(on gate: Gate?) { self.gate.withLock { $0 = gate } }

        func getIfPresent(_ key: Key) async throws -> Value? { try await entry(forKey: key)?.value }
        func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
            let entry = try await store.entry(forKey: key)
            if let gate = gate.withLock({ $0 }) { try await gate.wait() }
            return entry
        }
        func set(_ value: Value, forKey key: Key) async throws { try await store.set(value, forKey: key) }
        func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
            try await store.set(value, forKey: key, expiresAt: expiresAt)
        }
        func remove(_ key: Key) async throws { try await store.remove(key) }
        func clear() async { await store.clear() }
        func onMemoryWarning() async { await store.onMemoryWarning() }
    }

    // MARK: Pooled gets and deadlines

    /// A pooled get that arrives after an entry's deadline joins a read that
    /// began before it and is answered with the expired value; the same get
    /// without the pool is a miss.
    @Test func aPooledGetArrivingAfterTheDeadlineIsNotAnsweredWithTheExpiredValue() async throws {
        let clock = TestClock()
        let store = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        try await store.set("v", forKey: "k", ttl: .seconds(10))
        let slow = SlowReadLevel(store)
        let gate = Gate()
        slow.hold(on: gate)
        let pool = slow.pooled(clock: clock)

        // A get at t=0 starts the shared read; it reads "v" (alive) and is held.
        let early = Task { try await pool.getIfPresent("k") }
        #expect(await yieldUntil { gate.waiting == 1 })

        // t=11 s: "v" expired 1 s ago. A get starting now must not see it.
        clock.advance(by: .seconds(11))
        let late = Task { try await pool.getIfPresent("k") }
        #expect(await yieldUntil { pool.waiterCount(for: "k") == 2 })
        gate.open()
        #expect(try await early.value == "v")  // began while "v" was alive
        let answer = try await late.value
        #expect(answer == nil, "a get that began 1 s after the deadline was answered with the expired value \(answer ?? "nil")")
    }

    // MARK: Batches composed

    /// `upper.allBatch() + lower.allBatch()` with `lower` holding 1: "a", 2: "b",
    /// and a read of `[1, 2]` that has read both elements below and is held;
    /// `write` runs through the composition, then the read goes on.
    func batchReadHeldAcross(
        _ write: (ComposedCache<AllBatchCache<MemoryCacheLevel<Int, String>>, AllBatchCache<FakeLevel<Int, String>>>) async throws -> Void
    ) async throws -> (cache: ComposedCache<AllBatchCache<MemoryCacheLevel<Int, String>>, AllBatchCache<FakeLevel<Int, String>>>,
                       upper: MemoryCacheLevel<Int, String>, lower: FakeLevel<Int, String>, read: [String]) {
        let upper = MemoryCacheLevel<Int, String>(capacity: 1000)
        let lower = FakeLevel<Int, String>(name: "lower", [1: "a", 2: "b"])
        lower.readBeforeHolding(true)
        let gate = Gate()
        lower.holdGets(on: gate)
        let cache = upper.allBatch() + lower.allBatch()
        let read = Task { try await cache.get([1, 2]) }
        #expect(await yieldUntil { gate.waiting == 2 })  // both elements read ("a", "b"), replies held
        try await write(cache)
        gate.open()
        let answer = try await read.value
        await cache.waitForPendingWrites()
        return (cache, upper, lower, answer)
    }

    /// The composition orders writes and back-fills per *batch key* (the
    /// array), but both levels store per element. A remove of `[1]` did not
    /// void the back-fill of a read of `[1, 2]` begun before it, which wrote
    /// key 1 back into the upper level.
    @Test func aBatchBackfillDoesNotBringBackAnElementRemovedThroughTheComposition() async throws {
        let (cache, upper, lower, read) = try await batchReadHeldAcross { try await $0.remove([1]) }
        #expect(read == ["a", "b"])
        #expect(lower.contents[1] == nil)
        #expect(upper.value(forKey: 1) == nil, "the removed element 1 came back above: \(upper.value(forKey: 1) ?? "nil")")
        let after = try await cache.getIfPresent([1])
        #expect(after == nil, "get([1]) after remove([1]) returned \(String(describing: after))")
    }

    /// The same with a set: the back-fill of `[1, 2]` read before `set(["z"], [1])`
    /// overwrote "z" above with the older "a".
    @Test func aBatchBackfillDoesNotOverwriteAnElementSetThroughTheComposition() async throws {
        let (cache, _, _, _) = try await batchReadHeldAcross { try await $0.set(["z"], forKey: [1]) }
        let after = try await cache.getIfPresent([1])
        #expect(after == ["z"], "get([1]) after set([\"z\"], [1]) returned \(String(describing: after))")
    }

    // MARK: Key transforms that decline

    /// A key transform that declines (a `FetchError`) makes a set a no-op: the
    /// level keeps the value it held. When the transform accepts the key
    /// again (a toggle, as for conditions), the overwritten value is served.
    @Test func aKeyTransformThatDeclinedASetDoesNotServeTheOverwrittenValueLater() async throws {
        let declining = Atomic<Bool>(false)
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let upper = memory.mapKeys { (key: String) -> String in
            if declining.load(ordering: .relaxed) { throw FetchError.valueNotInCache }
            return key
        }
        let lower = MemoryCacheLevel<String, String>(capacity: 1000)
        let cache = upper + lower

        try await cache.set("v1", forKey: "k")
        declining.store(true, ordering: .relaxed)
        try await cache.set("v2", forKey: "k")
        declining.store(false, ordering: .relaxed)

        let answer = try await cache.get("k")
        // Known and documented (README, KeyTransformedCache): a declined key
        // cannot be mapped, so its inner entry cannot be dropped; a
        // transform whose answer changes over time is not supported. A
        // bounded memory of declined keys would be dropped first for keys a
        // deterministic transform always declines, and clearing the inner
        // level on every declined write would empty it for them.
        withKnownIssue("a key transform whose answer changes over time") {
            #expect(answer == "v2", "after set(v2) the composition answered the overwritten \(answer)")
        }
    }
}
