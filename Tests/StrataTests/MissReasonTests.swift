import Foundation
import Strata
import Testing

/// An observed get reports why a level missed: `expired` when the level held
/// an entry whose time had passed, `absent` otherwise; a hit has no reason.
@Suite struct MissReasonTests {
    /// The reasons the instrumented `level` reports for an absent key, a
    /// fresh key and a key set with `ttl` once `clock` has moved past it.
    func reasons<L: CacheLevel<String, Data>>(_ level: L, clock: TestClock) async throws -> [MissReason?] {
        let observed = level.instrumented(name: "L")
        try await observed.set(Data([1]), forKey: "fresh")
        try await observed.set(Data([2]), forKey: "old", expiresAt: clock.now().advanced(by: .seconds(1)))
        clock.advance(by: .seconds(2))
        var reasons: [MissReason?] = []
        for key in ["absent", "fresh", "old", "old"] {
            let trace = RequestTrace()
            _ = try await trace.record { try await observed.getIfPresent(key) }
            let gets = trace.events.filter { $0.operation == .get }
            #expect(gets.count == 1, "\(key): \(trace.events)")
            reasons.append(gets.first?.missReason)
        }
        return reasons
    }

    @Test func memoryLevel() async throws {
        for policy in EvictionPolicy.allCases {
            let clock = TestClock()
            let level = MemoryCacheLevel<String, Data>(capacity: 1 << 20, policy: policy, clock: clock)
            // The second get of the expired key finds nothing: it was removed.
            #expect(try await reasons(level, clock: clock) == [.absent, nil, .expired, .absent], "\(policy)")
        }
    }

    @Test func diskLevel() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-miss-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = TestClock()
        let level = try DiskCacheLevel<String, Data>(directory: directory, capacity: 1 << 20, clock: clock)
        #expect(try await reasons(level, clock: clock) == [.absent, nil, .expired, .absent])
    }

    @Test func keyValueStoreLevel() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-miss-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let clock = TestClock()
        let level = try KeyValueStoreLevel<String, Data>(name: "kv", directory: directory, clock: clock)
        #expect(try await reasons(level, clock: clock) == [.absent, nil, .expired, .absent])
    }

    /// Inside a composition each level's miss carries its own reason.
    @Test func eachLevelOfACompositionSaysWhy() async throws {
        let clock = TestClock()
        let top = MemoryCacheLevel<String, Data>(capacity: 1 << 20, clock: clock)
        let bottom = MemoryCacheLevel<String, Data>(capacity: 1 << 20, clock: clock)
        try top.store(Data([1]), forKey: "k", expiresAt: clock.now().advanced(by: .seconds(1)))
        clock.advance(by: .seconds(2))
        let cache = top.instrumented(name: "L1") + bottom.instrumented(name: "L2")
        let trace = RequestTrace()
        _ = try await trace.record { try await cache.getIfPresent("k") }
        let gets = trace.events.filter { $0.operation == .get && !$0.isBackfill }
        #expect(gets.map(\.level) == ["L1", "L2"])
        #expect(gets.map(\.missReason) == [.expired, .absent])
        #expect(gets[0].description.hasSuffix("(expired)"))
    }

    /// Unobserved gets still count their misses.
    @Test func unobservedGetsAreCountedAsBefore() async throws {
        let clock = TestClock()
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 20, clock: clock).instrumented(name: "L")
        try await level.set(Data([1]), forKey: "k", expiresAt: clock.now().advanced(by: .seconds(1)))
        clock.advance(by: .seconds(2))
        #expect(try await level.getIfPresent("k") == nil)
        #expect(level.statistics.snapshot().misses == 1)
    }
}
