@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Compositions built for one request over a long-lived level that reports
/// changes: the listeners they leave behind on it are forgotten once they can
/// do nothing, or nothing a newer one does not, so the level's list stays
/// bounded; the upper levels stay coherent while they live.
@Suite struct ListenerPruningTests {
    typealias Memory = MemoryCacheLevel<String, String>

    final class Weak: @unchecked Sendable {
        // Safe: written once, in `init`, before the box is shared; weak loads are atomic.
        weak var object: AnyObject?
        init(_ object: AnyObject) { self.object = object }
    }

    /// A fresh memory level per request over a shared one: each request's
    /// memory level is freed with its composition, and its listeners go.
    @Test func freshUpperLevelsAreFreedAndTheirListenersForgotten() async throws {
        let shared = FakeLevel<String, String>(name: "shared", ["k": "v"])
        var uppers: [Weak] = []
        for _ in 0..<200 {
            let memory = Memory(capacity: 1 << 20)
            let cache = memory + shared
            #expect(try await cache.getIfPresent("k") == "v")
            await cache.waitForPendingWrites()
            uppers.append(Weak(memory))
        }
        // A back-fill's task lets go of what it held a moment after it is done.
        #expect(await poll { uppers.allSatisfy { $0.object == nil } }, "a request's memory level outlived its composition")
        #expect(await poll { shared.listeners.countAfterForgettingSpent() == 0 },
                "\(shared.listeners.count) listeners left on the shared level")
    }

    /// One long-lived memory level, a composition per request: the memory
    /// level still drops what the shared level reports.
    @Test func aLongLivedUpperStaysCoherentAcrossCompositionsBuiltPerRequest() async throws {
        let shared = FakeLevel<String, String>(name: "shared", ["k": "v1"])
        let memory = Memory(capacity: 1 << 20)
        for _ in 0..<20 {
            let cache = memory + shared
            #expect(try await cache.getIfPresent("k") == "v1")
            await cache.waitForPendingWrites()
        }
        #expect(memory.value(forKey: "k") == "v1")
        await shared.changeElsewhere("k", to: "v2")
        #expect(memory.value(forKey: "k") == nil, "the memory level kept a value the shared level reported changed")
        #expect(try await (memory + shared).getIfPresent("k") == "v2")
    }

    /// A pool over a long-lived memory level, built per request: the pool
    /// goes with its composition, the memory level it fills does not, and
    /// must still hear what the shared level reports.
    @Test func anUpperThatIsAHandleToALongLivedLevelStaysCoherent() async throws {
        let shared = FakeLevel<String, String>(name: "shared", ["k": "v1"])
        let memory = Memory(capacity: 1 << 20)
        do {
            let cache = memory.pooled() + shared
            #expect(try await cache.getIfPresent("k") == "v1")
            await cache.waitForPendingWrites()
        }
        #expect(memory.value(forKey: "k") == "v1")
        await shared.changeElsewhere("k", to: "v2")
        #expect(memory.value(forKey: "k") == nil, "the memory level kept a value the shared level reported changed")
        #expect(try await (memory.pooled() + shared).getIfPresent("k") == "v2")
    }

    /// A listener registered through a key transform drops more than a plain
    /// one (it cannot map the key back): a plain one registered later for the
    /// same upper level must not stand in for it.
    @Test func aTranslatedListenerIsNotReplacedByAPlainOne() async throws {
        let shared = FakeLevel<String, String>(name: "shared", ["p:a": "v1"])
        let memory = Memory(capacity: 1 << 20)
        do {
            let prefixed = KeyTransformedCache<FakeLevel<String, String>, String>(shared) { "p:\($0)" }
            let cache = memory + prefixed
            #expect(try await cache.getIfPresent("a") == "v1")
            await cache.waitForPendingWrites()
        }
        #expect(memory.value(forKey: "a") == "v1")
        do {
            let cache = memory + shared
            _ = try await cache.getIfPresent("b")
        }
        await shared.changeElsewhere("p:a", to: "v2")
        #expect(memory.value(forKey: "a") == nil, "the memory level kept, under its own key, a value the shared level reported changed")
    }

    /// Listeners a composition registers on its upper level serve only its
    /// reads: they go once it has.
    @Test func upperSideListenersGoWithTheirComposition() async throws {
        let shared = FakeLevel<String, String>(name: "shared")
        let origin = FakeLevel<String, String>(name: "origin", ["k": "v"])
        for _ in 0..<200 {
            let cache = shared + origin
            #expect(try await cache.getIfPresent("k") == "v")
            await cache.waitForPendingWrites()
        }
        #expect(await poll { shared.listeners.countAfterForgettingSpent() == 0 },
                "\(shared.listeners.count) listeners left on the upper level")
    }

    /// A disk level starts its report loop inside the first registration,
    /// which is a composition's: the loop inherits the composition's
    /// registration, and a listener that registers another from inside a
    /// report must not be taken for the composition's and forgotten with it.
    @Test func aListenerRegisteredFromAReportIsNotTheCompositions() async throws {
        let root = TemporaryDirectory(); defer { root.remove() }
        let disk = try DiskCacheLevel<String, String>(directory: root.url, capacity: 1 << 20)
        let writer = try DiskCacheLevel<String, String>(directory: root.url, capacity: 1 << 20)
        let target = FakeLevel<String, String>(name: "target")
        let registered = Gate()
        do {
            let cache = Memory(capacity: 1 << 20) + disk  // the disk level's first listener
            disk.addInvalidationListener { _ in
                if target.listeners.isEmpty {
                    target.addInvalidationListener { _ in }
                    registered.open()
                }
            }
            try await writer.set("v1", forKey: "k")
            #expect(try await cache.getIfPresent("k") == "v1")
            // Reported through the disk level's loop (it may take a few
            // writes: a report can fall before the read it would void).
            for round in 2...100 where target.listeners.isEmpty {
                try await writer.set("v\(round)", forKey: "k")
                _ = try await cache.getIfPresent("k")
                _ = await poll(timeout: .seconds(1)) { !target.listeners.isEmpty }
            }
            try await registered.wait()
            _ = cache
        }
        target.addInvalidationListener { _ in }
        #expect(target.listeners.count == 2, "a listener registered from a report was forgotten")
    }

    /// Stress: 8 tasks build compositions per request (a fresh memory level
    /// each, and over one long-lived memory level) while the shared level
    /// reports changes. Afterwards the long-lived level is coherent, no fresh
    /// level is left, and the list holds only what can still do something.
    @Test func compositionsBuiltConcurrentlyWhileReportsArrive() async throws {
        let shared = FakeLevel<String, String>(name: "shared", Dictionary(uniqueKeysWithValues: (0..<16).map { ("k\($0)", "v0") }))
        let longLived = Memory(capacity: 1 << 20)
        final class Fresh: Sendable { let levels = Mutex<[Weak]>([]) }
        let fresh = Fresh()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for i in 0..<100 {
                        let key = "k\((task + i) % 16)"
                        if i % 2 == 0 {
                            let memory = Memory(capacity: 1 << 20)
                            fresh.levels.withLock { $0.append(Weak(memory)) }
                            let cache = memory + shared
                            _ = try? await cache.getIfPresent(key)
                            await cache.waitForPendingWrites()
                        } else {
                            let cache = longLived + shared
                            _ = try? await cache.getIfPresent(key)
                            await cache.waitForPendingWrites()
                        }
                    }
                }
            }
            group.addTask {
                for i in 0..<200 { await shared.changeElsewhere("k\(i % 16)", to: "v\(i)") }
            }
        }
        // One last change of every key: the long-lived level must drop each.
        for n in 0..<16 { await shared.changeElsewhere("k\(n)", to: "final") }
        for n in 0..<16 { #expect(longLived.value(forKey: "k\(n)") == nil, "k\(n) kept above after its last change") }
        #expect(await poll { fresh.levels.withLock { $0.allSatisfy { $0.object == nil } } },
                "a request's memory level outlived its composition")
        // What is left: the long-lived level's listeners, one per composition
        // over it (known: they are not bounded; see the README).
        #expect(await poll { shared.listeners.countAfterForgettingSpent() == 8 * 50 }, "\(shared.listeners.count) listeners")
    }

    /// A long-lived pool under compositions built per request, also read by
    /// itself: a change the level above it reports after its composition is
    /// gone still ends the sharing of the pool's reads begun before it, so
    /// the next request does not join one and get the old answer.
    @Test func aPoolOutlivingItsCompositionStillStopsSharingReadsBegunBeforeAChange() async throws {
        let shared = FakeLevel<String, String>(name: "shared")
        let origin = FakeLevel<String, String>(name: "origin", ["k": "old"])
        let pooled = origin.pooled()
        do { _ = try await (shared + pooled).getIfPresent("x") }  // an earlier request, now gone
        let gate = Gate()
        origin.holdGets(on: gate)
        origin.readBeforeHolding(true)
        let first = Task { try await pooled.getIfPresent("k") }  // not through a composition
        #expect(await poll { origin.callCounts.gets == 2 })
        try await origin.set("new", forKey: "k")
        await shared.changeElsewhere("k", to: nil)
        let cache = shared + pooled  // the next request
        let second = Task { try await cache.getIfPresent("k") }
        #expect(await poll(timeout: .seconds(5)) { origin.callCounts.gets == 3 }, "joined a read begun before the change")
        gate.open()
        #expect(try await first.value == "old")
        #expect(try await second.value == "new")
    }

    /// How a pool sits below a composition: itself, or inside a value that
    /// is not an object (erased, transformed, composed, switched).
    enum PoolShape: String, CaseIterable, CustomTestStringConvertible {
        case erased, valueTransformed, keyTransformed, composed, switched
        var testDescription: String { rawValue }

        func lower(over origin: FakeLevel<String, String>, other: FakeLevel<String, String>) -> BasicCache<String, String> {
            lowerAndPool(over: origin, other: other).lower
        }

        func lowerAndPool(
            over origin: FakeLevel<String, String>, other: FakeLevel<String, String>
        ) -> (lower: BasicCache<String, String>, pool: PooledCache<FakeLevel<String, String>>) {
            let pooled = origin.pooled()
            return (lower(of: pooled, other: other), pooled)
        }

        private func lower(of pooled: PooledCache<FakeLevel<String, String>>, other: FakeLevel<String, String>) -> BasicCache<String, String> {
            switch self {
            case .erased: return pooled.normalize()
            case .valueTransformed: return pooled.mapValues({ $0 }, inverse: { $0 }).normalize()
            case .keyTransformed: return pooled.mapKeys { (key: String) in key }.normalize()
            case .composed: return (other + pooled).normalize()
            case .switched: return switchLevels(cacheA: other, cacheB: pooled) { _ in .cacheB }.normalize()
            }
        }
    }

    /// The same, with the pool inside a value that is not an object: the
    /// listener a gone composition left must still reach the pool (weakly),
    /// through every wrapper that forwards ``CacheLevel/readSharers``.
    @Test(arguments: PoolShape.allCases)
    func aWrappedPoolOutlivingItsCompositionStillStopsSharingReadsBegunBeforeAChange(_ shape: PoolShape) async throws {
        let origin = FakeLevel<String, String>(name: "origin", ["k": "old"])
        let lower = shape.lower(over: origin, other: FakeLevel<String, String>(name: "other"))
        try await checkAPoolOutlivingItsComposition(lower, over: origin)
    }

    /// After its composition is gone, a change to one key ends the sharing
    /// of that key's reads only (through wrappers that keep keys): a read
    /// of another key in flight is still joined.
    @Test(arguments: [PoolShape.erased, .valueTransformed, .composed, .switched])
    func aGonePoolListenerEndsOnlyTheChangedKeysSharing(_ shape: PoolShape) async throws {
        let shared = FakeLevel<String, String>(name: "shared")
        let origin = FakeLevel<String, String>(name: "origin", ["k": "v", "other": "o"])
        let (lower, pooled) = shape.lowerAndPool(over: origin, other: FakeLevel<String, String>(name: "other"))
        do { _ = try await (shared + lower).getIfPresent("x") }  // an earlier request, now gone
        let gate = Gate()
        origin.holdGets(on: gate)
        let first = Task { try await lower.getIfPresent("other") }
        #expect(await poll { pooled.waiterCount(for: "other") == 1 })
        await shared.changeElsewhere("k", to: nil)
        let second = Task { try await lower.getIfPresent("other") }
        #expect(await poll { pooled.waiterCount(for: "other") == 2 }, "a change to k ended the sharing of another key's read")
        gate.open()
        #expect(try await first.value == "o")
        #expect(try await second.value == "o")
    }

    /// A user's own class that shares reads and does not name its pools
    /// (``CacheLevel/readSharers``): the listener reaches the class itself,
    /// below a composition or erased.
    @Test(arguments: [false, true])
    func aUsersClassThatSharesReadsIsReachedItself(erased: Bool) async throws {
        let origin = FakeLevel<String, String>(name: "origin", ["k": "old"])
        let coalescing = Coalescing(origin.pooled())
        if erased {
            try await checkAPoolOutlivingItsComposition(coalescing.normalize(), over: origin)
        } else {
            try await checkAPoolOutlivingItsComposition(coalescing, over: origin)
        }
    }

    /// A user's single-flight level: shares reads, forwards the two members
    /// that say so, and knows nothing of ``ReadSharers``.
    final class Coalescing: CacheLevel {
        let pool: PooledCache<FakeLevel<String, String>>
        init(_ pool: PooledCache<FakeLevel<String, String>>) { self.pool = pool }
        var name: String { "coalescing" }
        var sharesReadsInFlight: Bool { true }
        func endSharingReads(_ invalidation: CacheInvalidation<String>) { pool.endSharingReads(invalidation) }
        func getIfPresent(_ key: String) async throws -> String? { try await pool.getIfPresent(key) }
        func set(_ value: String, forKey key: String) async throws { try await pool.set(value, forKey: key) }
        func remove(_ key: String) async throws { try await pool.remove(key) }
        func clear() async { await pool.clear() }
        func onMemoryWarning() async {}
    }

    /// A request through `shared + lower`, gone; a read of the pool begun
    /// before a change the shared level reports; a later request must not
    /// join it.
    func checkAPoolOutlivingItsComposition<Lower: CacheLevel<String, String>>(
        _ lower: Lower, over origin: FakeLevel<String, String>
    ) async throws {
        let shared = FakeLevel<String, String>(name: "shared")
        do { _ = try await (shared + lower).getIfPresent("x") }  // an earlier request, now gone
        #expect(shared.listeners.countAfterForgettingSpent() == 1, "forgotten while the pool below lives")
        let gets = origin.callCounts.gets
        let gate = Gate()
        origin.holdGets(on: gate)
        origin.readBeforeHolding(true)
        let first = Task { try await lower.getIfPresent("k") }  // not through a composition
        #expect(await poll { origin.callCounts.gets == gets + 1 })
        try await origin.set("new", forKey: "k")
        await shared.changeElsewhere("k", to: nil)
        let cache = shared + lower  // the next request
        let second = Task { try await cache.getIfPresent("k") }
        #expect(await poll(timeout: .seconds(5)) { origin.callCounts.gets == gets + 2 }, "joined a read begun before the change")
        gate.open()
        #expect(try await first.value == "old")
        #expect(try await second.value == "new")
    }

    /// A pool's listener left behind holds the pool weakly: it goes with the pool.
    @Test func aListenerLeftForAWrappedPoolGoesWithThePool() async throws {
        let shared = FakeLevel<String, String>(name: "shared")
        let origin = FakeLevel<String, String>(name: "origin", ["k": "v"])
        do {
            let lower = origin.pooled().normalize()
            for _ in 0..<50 { _ = try await (shared + lower).getIfPresent("k") }
        }
        #expect(await poll { shared.listeners.countAfterForgettingSpent() == 0 },
                "\(shared.listeners.count) listeners left after the pool went")
    }

    /// A level over a shared store that reports it directly (as a disk or
    /// Redis level does), for tests.
    final class DirectLevel: CacheLevel, ReportsItsStoreDirectly {
        let store: FakeLevel<String, String>
        init(_ store: FakeLevel<String, String>) { self.store = store }
        var name: String { "direct" }
        func getIfPresent(_ key: String) async throws -> String? { try await store.getIfPresent(key) }
        func set(_ value: String, forKey key: String) async throws { try await store.set(value, forKey: key) }
        func remove(_ key: String) async throws { try await store.remove(key) }
        func clear() async { await store.clear() }
        func onMemoryWarning() async {}
        func addInvalidationListener(_ listener: @escaping @Sendable (CacheInvalidation<String>) async -> Void) {
            store.addInvalidationListener(listener)
        }
    }

    /// A long-lived memory level directly over a store's level, a
    /// composition per request: one listener stands in for those of the
    /// compositions gone, and the memory level stays coherent.
    @Test func aLongLivedMemoryLevelDirectlyOverAStoreKeepsOneListener() async throws {
        let store = FakeLevel<String, String>(name: "store", ["k": "v1"])
        let shared = DirectLevel(store)
        let memory = Memory(capacity: 1 << 20)
        for _ in 0..<200 {
            let cache = memory + shared
            #expect(try await cache.getIfPresent("k") == "v1")
            await cache.waitForPendingWrites()
        }
        #expect(await poll { store.listeners.countAfterForgettingSpent() <= 2 }, "\(store.listeners.count) listeners")
        await store.changeElsewhere("k", to: "v2")
        #expect(memory.value(forKey: "k") == nil, "the memory level kept a value the store reported changed")
        #expect(try await (memory + shared).getIfPresent("k") == "v2")
    }

    /// The same with the memory level instrumented (a struct wrapper: no
    /// identity to stand in by), as a review found with a real disk level:
    /// each request's composition leaves a listener that holds the level, so
    /// the list grows by one per request. Known issue (#31): the coordinator
    /// that owns a stack's subscriptions replaces the stand-in rules; until
    /// then, build the stack once and reuse it per request.
    @Test func anInstrumentedLongLivedLevelDirectlyOverAStoreKeepsOneListener() async throws {
        let store = FakeLevel<String, String>(name: "store", ["k": "v1"])
        let shared = DirectLevel(store)
        let memory = Memory(capacity: 1 << 20)
        let l1 = memory.instrumented(name: "L1")
        for _ in 0..<100 {
            let cache = l1 + shared
            #expect(try await cache.getIfPresent("k") == "v1")
            await cache.waitForPendingWrites()
        }
        await withKnownIssue("#31: per-request compositions over an instrumented level keep a listener each") {
            #expect(await poll(timeout: .seconds(1)) { store.listeners.countAfterForgettingSpent() <= 2 },
                    "\(store.listeners.count) listeners")
        }
        await store.changeElsewhere("k", to: "v2")
        #expect(memory.value(forKey: "k") == nil, "the memory level kept a value the store reported changed")
        #expect(l1.statistics.snapshot().removes == 0, "invalidations are not removes")
    }

    /// A long-lived level object other than a memory level (a disk level, a
    /// pool built once) directly over a store's level, a composition per
    /// request: one listener stands in for those gone, and it stays coherent.
    @Test func aLongLivedLevelObjectDirectlyOverAStoreKeepsOneListener() async throws {
        let store = FakeLevel<String, String>(name: "store", ["k": "v1"])
        let shared = DirectLevel(store)
        let top = FakeLevel<String, String>(name: "top")
        for _ in 0..<200 {
            let cache = top + shared
            #expect(try await cache.getIfPresent("k") == "v1")
            await cache.waitForPendingWrites()
        }
        #expect(await poll { store.listeners.countAfterForgettingSpent() <= 2 }, "\(store.listeners.count) listeners")
        #expect(top.contents["k"] == "v1")
        await store.changeElsewhere("k", to: "v2")
        #expect(top.contents["k"] == nil, "the upper level kept a value the store reported changed")
    }

    /// `memory + disk + redis` built per request over long-lived levels:
    /// the outer composition's listener on the store holds its upper level,
    /// the composition `memory + disk`, built anew each time but sharing
    /// its `WriteOrder` with every other alive (``SharedWriteOrders``), so a
    /// newer listener stands in for a gone one (it grew by one per request
    /// before). Both levels above stay coherent.
    @Test func aThreeLevelStackBuiltPerRequestKeepsOneListenerOnItsStore() async throws {
        let store = FakeLevel<String, String>(name: "store", ["k": "v1"])
        let middleStore = FakeLevel<String, String>(name: "middle")
        let shared = DirectLevel(store), middle = DirectLevel(middleStore)
        let memory = Memory(capacity: 1 << 20)
        for _ in 0..<50 {
            let cache = memory + middle + shared
            #expect(try await cache.getIfPresent("k") == "v1")
            await cache.waitForPendingWrites()
        }
        #expect(store.listeners.countAfterForgettingSpent() <= 2, "\(store.listeners.count) listeners")
        #expect(middleStore.listeners.countAfterForgettingSpent() <= 2, "\(middleStore.listeners.count) listeners")
        #expect(memory.value(forKey: "k") == "v1")
        await store.changeElsewhere("k", to: "v2")
        #expect(memory.value(forKey: "k") == nil, "the memory level kept a value the store reported changed")
        #expect(try await middleStore.getIfPresent("k") == nil, "the middle level kept a value the store reported changed")
        #expect(try await (memory + middle + shared).getIfPresent("k") == "v2")
    }

    /// An upper composition kept and read through directly, also used in
    /// compositions built per request: a later request's listener, standing
    /// in for the one holding the kept copy, drops through a composition
    /// that shares the kept copy's order, so the kept copy's back-fill in
    /// flight is dropped too (review, helper-6: with an order of its own,
    /// the back-fill landed the replaced value).
    @Test func aKeptCopyOfAnUpperCompositionStaysOrderedAfterLaterRequests() async throws {
        let store = FakeLevel<String, String>(name: "store", ["k": "v1"])
        let shared = DirectLevel(store)
        let middle = FakeLevel<String, String>(name: "middle", ["k": "v1"])  // does not report its own writes
        let top = FakeLevel<String, String>(name: "top")
        let local = top + middle  // long-lived, also read directly
        do { _ = try await (local + shared).getIfPresent("x") }
        do { _ = try await (top + middle + shared).getIfPresent("y") }
        let gate = Gate()
        top.holdSets(on: gate)
        #expect(try await local.getIfPresent("k") == "v1")  // its back-fill into `top` waits
        #expect(await poll { top.callCounts.sets == 1 })
        let change = Task { await store.changeElsewhere("k", to: "v2") }
        let droppedBeforeTheBackfillLanded = await poll(timeout: .seconds(1)) { top.callCounts.removes > 0 }
        gate.open()
        await change.value
        await local.waitForPendingWrites()
        #expect(!droppedBeforeTheBackfillLanded, "a drop not ordered after the kept composition's back-fill")
        #expect(top.contents["k"] == nil, "the top level kept a value the store reported changed")
    }

    /// A stack whose inner composition still has a back-fill in flight
    /// (begun by the gone request's read): the drop a report causes is
    /// ordered after it, whichever request's listener makes it.
    @Test func aStackWithABackfillInFlightInsideStaysOrdered() async throws {
        let store = FakeLevel<String, String>(name: "store", ["k": "v1"])
        let middleStore = FakeLevel<String, String>(name: "middle", ["k": "v1"])
        let shared = DirectLevel(store), middle = DirectLevel(middleStore)
        let top = FakeLevel<String, String>(name: "top")
        let gate = Gate()
        top.holdSets(on: gate)
        do {
            let cache = top + middle + shared
            #expect(try await cache.getIfPresent("k") == "v1")  // its back-fill into `top` waits
        }
        #expect(await poll { top.callCounts.sets == 1 })
        do { _ = try await (top + middle + shared).getIfPresent("x") }  // the next request
        let change = Task { await store.changeElsewhere("k", to: "v2") }
        let droppedBeforeTheBackfillLanded = await poll(timeout: .seconds(1)) { top.callCounts.removes > 0 }
        gate.open()
        await change.value
        #expect(!droppedBeforeTheBackfillLanded, "a listener that stood in dropped k from the top level before the back-fill in flight landed")
        #expect(top.contents["k"] == nil, "the top level kept a value the store reported changed")
    }

    /// Stand-ins only for the same levels in the same shape: a stack over
    /// another memory level, or the same levels composed the other way
    /// round, keeps its own listener.
    @Test func aStackOfOtherLevelsDoesNotStandInForAnother() async throws {
        let store = FakeLevel<String, String>(name: "store", ["k": "v1"])
        let shared = DirectLevel(store), middle = DirectLevel(FakeLevel<String, String>(name: "middle"))
        let m1 = Memory(capacity: 1 << 20), m2 = Memory(capacity: 1 << 20)
        do {
            let cache = m1 + middle + shared
            #expect(try await cache.getIfPresent("k") == "v1")
            await cache.waitForPendingWrites()
        }
        do {
            let cache = m2 + middle + shared
            #expect(try await cache.getIfPresent("k") == "v1")
            await cache.waitForPendingWrites()
        }
        await store.changeElsewhere("k", to: "v2")
        #expect(m1.value(forKey: "k") == nil, "the first stack's memory level kept a value the store reported changed")
        #expect(m2.value(forKey: "k") == nil)
    }

    /// A listener that stands in for another takes its place: in
    /// `m1 + (m2 + store)` the inner composition's listener (drop from m2)
    /// must hear a report before the outer one's (drop from m1), or a read
    /// between the two finds m2 stale and fills m1 with it for good.
    @Test func aListenerStandingInForAnotherTakesItsPlace() async throws {
        let store = FakeLevel<String, String>(name: "store", ["k": "v1"])
        let shared = DirectLevel(store)
        let m1 = Memory(capacity: 1 << 20), m2 = Memory(capacity: 1 << 20)
        do {
            let outer = m1 + (m2 + shared)
            #expect(try await outer.getIfPresent("k") == "v1")
            await outer.waitForPendingWrites()
        }
        // A request that reads while the report goes round the listeners.
        shared.addInvalidationListener { _ in
            let cache = m1 + (m2 + shared)
            _ = try? await cache.getIfPresent("k")
            await cache.waitForPendingWrites()
        }
        do {
            let inner = m2 + shared  // stands in for the first inner composition's listener
            _ = try await inner.getIfPresent("x")
        }
        await store.changeElsewhere("k", to: "v2")
        #expect(try await (m1 + (m2 + shared)).getIfPresent("k") == "v2")
    }
}
