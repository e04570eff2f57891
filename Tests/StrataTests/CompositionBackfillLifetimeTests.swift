@testable import Strata
import Testing

/// A composition's back-fills outlive its last copy (a composition built for
/// one request returns from `get` before its back-fill lands). Until they
/// land, a change its upper level reports must still drop them.
@Suite struct CompositionBackfillLifetimeTests {
    /// A key other than "k" in the same `WriteOrder` stripe: its back-fill,
    /// held in `upper.set`, makes "k"'s wait.
    static let sameStripe: String = {
        var n = 0
        while WriteOrder.stripe(of: "k\(n)") != WriteOrder.stripe(of: "k") { n += 1 }
        return "k\(n)"
    }()

    @Test func aChangeReportedAboveDropsABackfillOfACompositionAlreadyDropped() async throws {
        let upper = FakeLevel<String, String>(name: "upper")
        let lower = FakeLevel<String, String>(name: "lower", ["k": "v1", Self.sameStripe: "x"])
        let gate = Gate()
        upper.holdSets(on: gate)
        let tracker: BackfillTracker
        do {
            let cache = upper + lower
            tracker = cache.backfills
            #expect(try await cache.getIfPresent(Self.sameStripe) == "x")
            #expect(await poll { gate.waiting == 1 }, "the first back-fill reaches upper.set and holds its stripe")
            #expect(try await cache.getIfPresent("k") == "v1")  // its back-fill waits for the stripe
        }
        // The composition is gone; its back-fill of "k" is not. Another
        // client changes "k" in the store under `upper`, which reports it.
        await upper.changeElsewhere("k", to: "v2")
        gate.open()
        await tracker.waitUntilIdle()
        #expect(upper.contents["k"] == "v2", "the back-fill of a read begun before the change overwrote it")
    }
}
