@testable import Strata
import Testing

/// ``CacheLevel/sharesReadsInFlight``: a pool says so, wrappers, type erasure
/// and compositions pass it on, and nothing else claims it (a composition
/// over a level that does not share reads skips the bookkeeping it needs).
@Suite struct SharesReadsInFlightTests {
    @Test func aPoolSharesReadsAndWrappersErasureAndCompositionsSaySo() {
        let origin = BasicFetcher<String, String> { "v:\($0)" }
        let memory = MemoryCacheLevel<String, String>(capacity: 100)
        #expect(!origin.sharesReadsInFlight && !memory.sharesReadsInFlight)
        #expect(!(memory + origin).sharesReadsInFlight, "a composition's own single flight is not claimed")
        let pooled = origin.pooled()
        #expect(pooled.sharesReadsInFlight)
        #expect(pooled.instrumented(name: "origin").capRequests(4).sharesReadsInFlight, "wrappers forward it")
        #expect(pooled.normalize().sharesReadsInFlight && !origin.normalize().sharesReadsInFlight)
        #expect((memory + pooled).sharesReadsInFlight && (pooled + memory).sharesReadsInFlight)
        #expect((memory + (memory + pooled).normalize()).sharesReadsInFlight)
        let erased: any CacheLevel<String, String> = memory + pooled
        #expect(erased.sharesReadsInFlight)
    }

    /// ``CacheLevel/endSharingReads(_:)``: when a level above a pool reports
    /// a change made elsewhere, the composition ends the sharing of the
    /// pool's reads in flight, through wrappers, type erasure and nesting:
    /// a get that arrives afterwards starts a read of its own.
    @Test(arguments: ["plain", "instrumented", "normalized", "nested", "existential", "flush"])
    func aChangeReportedAboveEndsTheSharingOfPooledReadsBelow(shape: String) async throws {
        let shared = FakeLevel<String, String>(name: "shared")
        let origin = FakeLevel<String, String>(name: "origin", ["k": "old"])
        let gate = Gate()
        origin.holdGets(on: gate)
        origin.readBeforeHolding(true)  // a read sees the data as it is when it begins
        let pooled = origin.pooled()
        let cache: any CacheLevel<String, String> = switch shape {
        case "instrumented": shared + pooled.instrumented(name: "origin")
        case "normalized": shared + pooled.normalize()
        case "nested": MemoryCacheLevel<String, String>(capacity: 100) + (shared + pooled)
        case "existential": shared + (pooled as any CacheLevel<String, String>).normalize()
        default: shared + pooled
        }
        let first = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.callCounts.gets == 1 })
        let otherFirst = Task { try await cache.getIfPresent("other") }
        #expect(await poll { origin.callCounts.gets == 2 })
        try await origin.set("new", forKey: "k")
        if shape == "flush" { await shared.flushElsewhere() } else { await shared.changeElsewhere("k", to: nil) }
        let second = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.callCounts.gets == 3 }, "the second get starts a read of its own")
        // Another key's read is shared still, unless everything changed (through
        // wrappers too: they pass the key on, not `.all`).
        let joinedBefore = (cache as? any ComposedLevels)?.readsJoined ?? 0
        let otherSecond = Task { try await cache.getIfPresent("other") }
        if shape == "flush" {
            #expect(await poll { origin.callCounts.gets == 4 })
        } else {
            // Joined by the composition itself (its single-flight), or by the pool below.
            #expect(await poll {
                pooled.waiterCount(for: "other") == 2 || ((cache as? any ComposedLevels)?.readsJoined ?? 0) > joinedBefore
            }, "joined the read of the other key")
        }
        gate.open()
        _ = try await (otherFirst.value, otherSecond.value)
        #expect(try await first.value == "old")
        #expect(try await second.value == "new", "not the answer of the read that began before the change")
        #expect(pooled.executions == (shape == "flush" ? 4 : 3))
    }
}
