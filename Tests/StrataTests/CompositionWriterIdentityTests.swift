@testable import Strata
import Synchronization
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

extension CompositionWriterIdentityTests {
    /// A store that keeps the origin of each write, as one does for the
    /// report of its own write that it delivers later.
    final class RecordingLevel: CacheLevel {
        let origins = Mutex<[CacheWriteOrigin]>([])
        var name: String { "recording" }
        func getIfPresent(_ key: String) async throws -> String? { nil }
        func set(_ value: String, forKey key: String) async throws { origins.withLock { $0.append(CacheContext.writeOrigin) } }
        func remove(_ key: String) async throws {}
        func clear() async {}
        func onMemoryWarning() async {}
    }

    /// A report still on its way names the compositions its write passed
    /// through by identity; it keeps them alive, so that no composition built
    /// meanwhile can take one's address and skip the report as its own.
    @Test func aPendingReportKeepsTheIdentitiesItNames() async throws {
        let store = RecordingLevel()
        let order: Weak
        do {
            let cache = MemoryCacheLevel<String, String>(capacity: 1 << 20) + store
            try await cache.set("v", forKey: "k")
            order = Weak(cache.order)
        }
        #expect(store.origins.withLock { $0.count } == 1)
        #expect(order.object != nil, "the identity a pending report names was freed")
        store.origins.withLock { $0.removeAll() }
        #expect(await poll { order.object == nil })
    }
}
