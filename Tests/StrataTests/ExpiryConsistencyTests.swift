import Foundation
import Strata
import StrataTestSupport
import Testing

/// No value outlives its TTL, whatever path it takes; no expiry input traps.
@Suite struct ExpiryConsistencyTests {
    @Test func backfillKeepsTheLowerEntrysDeadlineInMemoryOverMemory() async throws {
        let clock = TestClock()
        let upper = MemoryCacheLevel<String, String>(capacity: 1000, defaultTTL: .seconds(10), clock: clock)
        let lower = MemoryCacheLevel<String, String>(capacity: 1000, defaultTTL: .seconds(10), clock: clock)
        let cache = upper + lower
        try await cache.set("v", forKey: "k")  // t0: expires at t0+10 in both
        clock.advance(by: .seconds(9))
        upper.removeAll()
        #expect(try await cache.get("k") == "v")  // lower hit at t0+9, back-filled
        await cache.waitForPendingWrites()
        #expect(upper.value(forKey: "k") == "v")
        clock.advance(by: .seconds(6))  // t0+15
        #expect(try await cache.getIfPresent("k") == nil, "the back-fill gave the value a fresh TTL")
        #expect(upper.value(forKey: "k") == nil)
    }

    @Test func backfillThroughWrappersAndNestedCompositionsKeepsTheDeadline() async throws {
        let clock = TestClock()
        let top = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        let middle = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        let bottom = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        let cache = top.instrumented(name: "top").normalize() + middle.conditioned { _ in true } + bottom.pooled()
        try await bottom.set("v", forKey: "k", ttl: .seconds(10))
        clock.advance(by: .seconds(5))
        #expect(try await cache.get("k") == "v")
        await cache.waitForPendingWrites()
        #expect(top.value(forKey: "k") == "v" && middle.value(forKey: "k") == "v")
        clock.advance(by: .seconds(5))
        #expect(top.value(forKey: "k") == nil && middle.value(forKey: "k") == nil)
    }

    @Test func farFutureDatesAndHugeDurationsMeanNeverAndDoNotTrap() async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        for expiry in [Expiry.date(.distantFuture), .seconds(1e10), .seconds(.infinity), .seconds(1e300)] {
            let level = memory.expires(at: expiry)
            try await level.set("v", forKey: "k")
            clock.advance(by: .seconds(86_400 * 365 * 50))
            #expect(try await level.get("k") == "v", "\(expiry)")
        }
        try await memory.set("w", forKey: "w", ttl: .seconds(Int64.max))
        #expect(memory.value(forKey: "w") == "w")
        #expect(CacheInstant(.distantFuture).nanosecondsSince1970 == .max)
        #expect(CacheInstant(.distantPast).nanosecondsSince1970 == .min)
    }

    @Test func negativeAndNaNTTLsAreRejectedAtTheSet() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        for expiry in [Expiry.seconds(.nan), .seconds(-1)] {
            let level = memory.expires(at: expiry)
            await #expect(throws: ExpiryError.self) { try await level.set("v", forKey: "k") }
        }
        await #expect(throws: ExpiryError.self) { try await memory.set("v", forKey: "k", ttl: .seconds(-1)) }
        #expect(memory.count == 0)
    }

    @Test func aDateBeforeNowExpiresAtOnce() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        try await memory.expires(at: .date(Date(timeIntervalSince1970: 0))).set("v", forKey: "epoch")
        try await memory.expires(at: .date(.distantPast)).set("v", forKey: "past")
        #expect(memory.value(forKey: "epoch") == nil && memory.value(forKey: "past") == nil)
    }

    @Test func perEntryTTLPassesThroughCompositionsAndErasure() async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        let web = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        let cache = memory + web
        try await cache.set("v", forKey: "k", expiresAt: clock.now().advanced(by: .seconds(5)))
        try await cache.normalize().set("e", forKey: "e", expiresAt: clock.now().advanced(by: .seconds(5)))
        let erased: any CacheLevel<String, String> = cache
        try await erased.set("a", forKey: "a", expiresAt: clock.now().advanced(by: .seconds(5)))
        clock.advance(by: .seconds(5))
        for key in ["k", "e", "a"] {
            #expect(memory.value(forKey: key) == nil && web.value(forKey: key) == nil, "\(key) outlived its TTL")
        }
        // The Duration form compiles on compositions and erased levels (system clock).
        try await cache.set("t", forKey: "t", ttl: .seconds(5))
        try await erased.set("t", forKey: "t2", ttl: .seconds(5))
        let expiring = (memory + web).expires(at: .seconds(30))
        try await expiring.set("x", forKey: "x")
        #expect(memory.value(forKey: "x") == "x" && web.value(forKey: "x") == "x")
    }

    @Test func aFailedSetLeavesNoOldValueToServe() async throws {
        let upper = MemoryCacheLevel<String, String>(capacity: 10)
        let lower = MemoryCacheLevel<String, String>(capacity: 1000)
        let cache = upper + lower
        try await cache.set("old", forKey: "k")
        let new = String(repeating: "n", count: 26)
        do {
            try await cache.set(new, forKey: "k")
            Issue.record("expected the set to fail in the small level")
        } catch let error as LevelsFailedError {
            #expect(error.failingLevels == ["memory"])
        }
        #expect(try await cache.get("k") == new, "the level whose set failed answered with the old value")
        #expect(upper.value(forKey: "k") == nil)
    }
}

/// Durations at and beyond what 64-bit nanoseconds hold saturate to "never"
/// (or "long past"), neither trapping nor wrapping to an expiry in the past.
@Suite struct HugeDurationTests {
    @Test func durationsBeyondSixtyFourBitNanosecondsSaturate() {
        let wrapping = Duration.seconds(9_223_372_036) + .milliseconds(900)  // just past Int64.max nanoseconds
        #expect(wrapping.nanoseconds == .max)
        #expect((.zero - wrapping).nanoseconds == .min)
        #expect(Duration.seconds(UInt64.max).nanoseconds == .max)
        #expect(Duration.seconds(1e19).nanoseconds == .max)
        #expect(Duration.seconds(-1e19).nanoseconds == .min)
        #expect(Duration.milliseconds(1500).nanoseconds == 1_500_000_000)
        let now = SystemClock().now()
        #expect(now.advanced(by: wrapping).nanosecondsSince1970 == .max)
        #expect(now.advanced(by: .seconds(UInt64.max)).nanosecondsSince1970 == .max)
    }

    @Test func aTTLJustPastSixtyFourBitNanosecondsMeansNever() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        try await memory.set("v", forKey: "k", ttl: .seconds(9_223_372_036) + .milliseconds(900))
        #expect(try await memory.getIfPresent("k") == "v", "the deadline wrapped into the past")
        try await memory.set("w", forKey: "huge", ttl: .seconds(UInt64.max))
        #expect(try await memory.getIfPresent("huge") == "w")
    }
}
