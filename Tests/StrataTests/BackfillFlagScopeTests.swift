import Foundation
import Strata
import StrataTestSupport
import Testing

/// A back-fill's writes are back-fills; what user code does from inside one
/// (a transformer's inverse, a condition, a key transform) is not: a set it
/// makes keeps its own deadline rather than the back-fill's cap.
@Suite struct BackfillFlagScopeTests {
    /// A side store with a 10 s TTL, written with a 60 s deadline from user code.
    func expectUserSetKeepsItsDeadline<Upper: CacheLevel<String, String>>(
        _ makeUpper: (MemoryCacheLevel<String, String>) -> Upper, _ label: String
    ) async throws {
        let clock = TestClock(SystemClock().now())
        let audit = MemoryCacheLevel<String, String>(capacity: 1000, defaultTTL: .seconds(10), clock: clock)
        let upper = makeUpper(audit)
        let lower = MemoryCacheLevel<String, String>(capacity: 1000, clock: clock)
        try await lower.set("v", forKey: "k", ttl: .seconds(300))
        let cache = upper + lower
        #expect(try await cache.get("k") == "v", "\(label)")
        await cache.waitForPendingWrites()
        #expect(audit.value(forKey: "audit") == "seen", "\(label): the user code ran")
        clock.advance(by: .seconds(30))
        #expect(audit.value(forKey: "audit") == "seen", "\(label): a user set with its own 60 s deadline was capped to 10 s")
    }

    @Test func userCodeInsideABackfillWritesAsTheUser() async throws {
        try await expectUserSetKeepsItsDeadline({ audit in
            ValueTransformedCache(MemoryCacheLevel<String, String>(capacity: 1000), transform: { _, v in v },
                                  inverseTransform: { _, v in
                                      try await audit.set("seen", forKey: "audit", ttl: .seconds(60))
                                      return v
                                  })
        }, "inverse transform")
        try await expectUserSetKeepsItsDeadline({ audit in
            MemoryCacheLevel<String, String>(capacity: 1000).conditioned { _ in
                try await audit.set("seen", forKey: "audit", ttl: .seconds(60))
                return true
            }
        }, "condition")
    }
}
