import Strata
import Testing

/// `slidingExpiry` on the memory level (Caffeine's `expireAfterAccess`), on
/// both policies, with a clock that moves only when told to.
@Suite struct SlidingExpiryTests {
    static let policies: [EvictionPolicy] = [.adaptive, .lru]

    /// An entry read more often than the sliding time stays; one left alone
    /// that long expires.
    @Test(arguments: policies)
    func aReadKeepsAnEntryAndIdlenessEndsIt(policy: EvictionPolicy) async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(countLimit: 100, policy: policy, slidingExpiry: .seconds(10), clock: clock)
        try await memory.set("hot", forKey: "a")
        try await memory.set("cold", forKey: "b")
        for _ in 0..<5 {
            clock.advance(by: .seconds(6))
            #expect(try await memory.getIfPresent("a") == "hot", "read every 6 s, it must stay")
        }
        #expect(try await memory.getIfPresent("b") == nil, "unread for 30 s, it must have expired")
        clock.advance(by: .seconds(10))
        #expect(try await memory.getIfPresent("a") == nil, "unread for 10 s, it must have expired")
    }

    /// Reads never carry an entry past its TTL (the value's own deadline).
    @Test(arguments: policies)
    func slidingNeverPassesTheTTL(policy: EvictionPolicy) async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(countLimit: 100, policy: policy, defaultTTL: .seconds(25),
                                                      slidingExpiry: .seconds(10), clock: clock)
        try await memory.set("v", forKey: "k")
        let setAt = clock.now()
        for _ in 0..<4 {
            clock.advance(by: .seconds(6))
            let entry = try await memory.entry(forKey: "k")
            #expect(entry?.value == "v")
            #expect(entry?.expiresAt.map { $0 <= setAt.advanced(by: .seconds(25)) } == true, "the deadline slid past the TTL")
        }
        clock.advance(by: .seconds(1))  // 25 s after the set
        #expect(try await memory.getIfPresent("k") == nil, "read every 6 s, it still ends at its TTL")
    }

    /// The deadline a hit reports is the slid one (what a level above keeps).
    @Test(arguments: policies)
    func aHitReportsTheSlidDeadline(policy: EvictionPolicy) async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(countLimit: 100, policy: policy, slidingExpiry: .seconds(10), clock: clock)
        try await memory.set("v", forKey: "k", expiresAt: nil)
        clock.advance(by: .seconds(4))
        let entry = try await memory.entry(forKey: "k")
        #expect(entry?.expiresAt == clock.now().advanced(by: .seconds(10)))
    }

    /// `contains` is a peek: it neither keeps an entry nor slides it.
    @Test(arguments: policies)
    func aPeekDoesNotSlide(policy: EvictionPolicy) async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(countLimit: 100, policy: policy, slidingExpiry: .seconds(10), clock: clock)
        try await memory.set("v", forKey: "k")
        clock.advance(by: .seconds(6))
        #expect(memory.contains("k"))
        clock.advance(by: .seconds(6))
        #expect(!memory.contains("k"), "the peek slid the entry")
        #expect(try await memory.getIfPresent("k") == nil)
    }

    /// A write restarts the idle time; `removeExpired` sweeps idle entries.
    @Test(arguments: policies)
    func aWriteRestartsTheIdleTimeAndTheSweepFindsIdleEntries(policy: EvictionPolicy) async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(countLimit: 100, policy: policy, slidingExpiry: .seconds(10), clock: clock)
        try await memory.set("v1", forKey: "k")
        try await memory.set("x", forKey: "idle")
        clock.advance(by: .seconds(8))
        try await memory.set("v2", forKey: "k")
        clock.advance(by: .seconds(8))
        #expect(await memory.removeExpired() == 1, "only the idle entry has expired")
        #expect(try await memory.getIfPresent("k") == "v2")
        #expect(memory.count == 1)
    }
}
