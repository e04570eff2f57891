@testable import Strata
import Testing

/// A composition's listener on its lower level skips the reports of the
/// composition's own writes, which it knows by its `WriteOrder`'s identity.
/// Once the composition is gone its listener stays (its upper level outlives
/// it), so the `WriteOrder` must stay too: freed, its address could become
/// another composition's, and the listener would skip that one's writes as
/// its own, keeping values they replaced above. (The reuse itself depends on
/// the allocator; what is pinned is that the identity cannot be reused.)
@Suite struct CompositionWriterIdentityTests {
    final class Weak: @unchecked Sendable {
        // Safe: written once, in `init`, before the box is shared; weak loads are atomic.
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

    @Test func aListenerLeftBehindKeepsTheIdentityItSkipsWritesBy() async throws {
        let shared = FakeLevel<String, String>(name: "shared", ["k": "v"])
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let order: Weak
        do {
            let cache = memory + shared
            #expect(try await cache.getIfPresent("k") == "v")
            await cache.waitForPendingWrites()
            order = Weak(cache.order)
        }
        #expect(order.object != nil, "the write order a listener knows its composition's writes by was freed")
    }

    @Test func withItsUpperLevelGoneTheIdentityGoesToo() async throws {
        let shared = FakeLevel<String, String>(name: "shared", ["k": "v"])
        let order: Weak
        do {
            let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + shared
            #expect(try await cache.getIfPresent("k") == "v")
            await cache.waitForPendingWrites()
            order = Weak(cache.order)
        }
        // The listener is spent and forgotten (a back-fill's task lets go
        // of what it held a moment after it is done).
        #expect(await poll { shared.listeners.countAfterForgettingSpent() == 0 && order.object == nil })
    }
}
