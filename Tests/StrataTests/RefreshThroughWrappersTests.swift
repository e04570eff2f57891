import Strata
import Synchronization
import Testing

/// A refresh ahead of expiry (``ResilientCache``) through the wrappers an
/// application (or the explorer) puts around its levels: erased levels
/// forward it (before, ``BasicCache`` removed the key), instrumented levels
/// count it as a set, a condition that is off drops the level's copy, and a
/// request's trace notes that a refresh started but not its background work.
@Suite struct RefreshThroughWrappersTests {
    /// Two erased, instrumented memory levels refreshing on every hit
    /// (fraction 0: no clock to advance through the erased levels).
    final class Fixture: Sendable {
        let top = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let bottom = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let l1: InstrumentedCache<MemoryCacheLevel<String, String>>
        let l2: InstrumentedCache<MemoryCacheLevel<String, String>>
        let loads = Atomic<Int>(0)
        init() {
            l1 = top.instrumented(name: "L1")
            l2 = bottom.instrumented(name: "L2")
        }
        var cache: ResilientCache<ComposedCache<BasicCache<String, String>, BasicCache<String, String>>> {
            (l1.normalize() + l2.normalize()).refreshAhead(at: 0)
        }
        func get(_ cache: ResilientCache<ComposedCache<BasicCache<String, String>, BasicCache<String, String>>>,
                 _ key: String) async throws -> String {
            try await cache.get(key, ttl: .seconds(600)) { key in "\(key) #\(self.loads.add(1, ordering: .relaxed).newValue)" }
        }
    }

    @Test func erasedLevelsKeepTheRefreshedValueAndCountItAsASet() async throws {
        let f = Fixture()
        let cache = f.cache
        #expect(try await f.get(cache, "k") == "k #1")
        await cache.waitForPendingWrites()
        #expect(try await f.get(cache, "k") == "k #1")
        await cache.waitForPendingWrites()
        #expect(f.loads.load(ordering: .relaxed) == 2)
        #expect(cache.resilienceStatistics.refreshesStarted == 1)
        // Replaced in both levels, not removed: the next get hits L1 with it.
        #expect(f.top.contains("k") && f.bottom.contains("k"))
        #expect(try await f.top.getIfPresent("k") == "k #2")
        #expect(try await f.bottom.getIfPresent("k") == "k #2")
        let (s1, s2) = (f.l1.statistics.snapshot(), f.l2.statistics.snapshot())
        #expect(s1.sets == 1 && s2.sets == 1, "the refresh's landing, counted as a set: \(s1.sets), \(s2.sets)")
        #expect(s1.backfills == 1 && s2.backfills == 1, "the first load's landing")
        #expect(s1.removes == 0 && s2.removes == 0)
    }

    @Test func aTraceNotesTheRefreshNotItsBackgroundWork() async throws {
        let f = Fixture()
        let cache = f.cache
        _ = try await f.get(cache, "k")
        await cache.waitForPendingWrites()
        let trace = RequestTrace()
        #expect(try await trace.record { try await f.get(cache, "k") } == "k #1")
        await cache.waitForPendingWrites()
        #expect(f.loads.load(ordering: .relaxed) == 2, "the refresh ran")
        let outcomes = trace.events.map { "\($0.level) \($0.outcome)" }
        #expect(outcomes == ["L1 hit", "\(cache.name) refreshStarted"], "\(outcomes)")
        #expect(trace.events.last?.key == "k")
    }

    @Test func aConditionThatIsOffDropsTheCopyARefreshWouldReplace() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let on = Atomic<Bool>(true)
        let level = memory.conditioned { _ in on.load(ordering: .relaxed) }
        try await level.set("old", forKey: "k")
        try await level.replace("old", with: Backfill(value: "new", expiresAt: nil), forKey: "k")
        #expect(try await memory.getIfPresent("k") == "new")
        on.store(false, ordering: .relaxed)
        try await level.replace("new", with: Backfill(value: "newer", expiresAt: nil), forKey: "k")
        #expect(!memory.contains("k"), "a level switched off kept a value its stack replaced")
    }
}
