import Foundation
@testable import Strata
import Synchronization
import Testing

/// A stack single-flights its reads of the level below (``ReadFlights``):
/// concurrent misses of one key make one read, a write ends the sharing, and
/// a cancelled leader does not fail the callers that joined it.
@Suite struct StackSingleFlightTests {
    @Test func concurrentMissesOfOneKeyMakeOneReadBelow() async throws {
        let origin = FakeLevel<String, String>(name: "origin", ["k": "v"])
        let gate = Gate()
        origin.holdGets(on: gate)
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + origin
        let gets = (0..<100).map { _ in Task { try await cache.getIfPresent("k") } }
        #expect(await poll { cache.readsJoined == 99 }, "\(cache.readsJoined) joined")
        gate.open()
        for get in gets { #expect(try await get.value == "v") }
        #expect(origin.callCounts.gets == 1)
    }

    /// Through `memory + redis-like shared level + pooled origin`: the
    /// shared level is asked once, not once per caller (issue #32: 1,000
    /// concurrent gets made 1,000 Redis round trips). Its stack (`memory +
    /// shared`, the upper level of the whole) holds the joiners.
    @Test func aMiddleLevelIsAskedOncePerKey() async throws {
        let shared = FakeLevel<String, String>(name: "shared")
        let origin = FakeLevel<String, String>(name: "origin", ["k": "v"])
        let gate = Gate()
        shared.holdGets(on: gate)
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + shared + origin.pooled()
        let gets = (0..<50).map { _ in Task { try await cache.getIfPresent("k") } }
        #expect(await poll { cache.upper.readsJoined == 49 }, "\(cache.upper.readsJoined) joined")
        gate.open()
        for get in gets { #expect(try await get.value == "v") }
        #expect(shared.callCounts.gets == 1)
    }

    @Test func aGetAfterAWriteDoesNotJoinAReadBegunBeforeIt() async throws {
        let origin = FakeLevel<String, String>(name: "origin", ["k": "old"])
        let gate = Gate()
        origin.holdGets(on: gate)
        origin.readBeforeHolding(true)  // the read sees the data as it is when it begins
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + origin
        let first = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.callCounts.gets == 1 })
        try await cache.set("new", forKey: "k")  // a write of the key through the stack
        memory.removeAll()                       // and memory forgets it (evicted)
        let second = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.callCounts.gets == 2 }, "the second get reads for itself")
        gate.open()
        #expect(try await first.value == "old")
        #expect(try await second.value == "new")
        await cache.waitForPendingWrites()
        #expect(try await cache.getIfPresent("k") == "new", "the first read's back-fill was dropped")
    }

    @Test func aCancelledLeaderDoesNotFailTheCallersThatJoinedIt() async throws {
        let origin = FakeLevel<String, String>(name: "origin", ["k": "v"])
        let gate = Gate()
        origin.holdGets(on: gate)
        let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + origin
        let leader = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.callCounts.gets == 1 })
        let joiner = Task { try await cache.getIfPresent("k") }
        #expect(await poll { cache.readsJoined == 1 })
        leader.cancel()
        await #expect(throws: CancellationError.self) { try await leader.value }
        #expect(await poll { origin.callCounts.gets == 2 }, "the joiner reads for itself")
        gate.open()
        #expect(try await joiner.value == "v")
    }

    /// Stress: 8 tasks get, set and remove 4 keys through `memory + origin`
    /// with a slow origin; after the last write to each key, a get answers it.
    @Test func concurrentGetsAndWritesEndCoherent() async throws {
        let origin = FakeLevel<String, String>(name: "origin")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + origin
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var random = SystemRandomNumberGenerator()
                    for step in 0..<400 {
                        let key = "k\(Int.random(in: 0..<4, using: &random))"
                        switch Int.random(in: 0..<10, using: &random) {
                        case 0: try await cache.set("w\(worker)-\(step)", forKey: key)
                        case 1: try await cache.remove(key)
                        default: _ = try await cache.getIfPresent(key)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        await cache.waitForPendingWrites()
        for key in ["k0", "k1", "k2", "k3"] {
            #expect(try await cache.getIfPresent(key) == origin.contents[key], "\(key)")
            try await cache.set("final", forKey: key)
            #expect(try await cache.getIfPresent(key) == "final")
        }
        #expect(cache.stack.flights.inFlight == 0)
    }
}
