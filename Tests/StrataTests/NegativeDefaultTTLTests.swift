import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A negative `defaultTTL:` (a sign slip, a config value parsed wrong) is bad
/// input: it is rejected with ``ExpiryError/invalidTTL(_:)`` naming it, as a
/// negative TTL given to a set is, never taken as "store everything already
/// expired" (a level that silently keeps nothing).
@Suite struct NegativeDefaultTTLTests {
    @Test func theDiskAndKeyValueStoreLevelsRejectItAtInit() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        #expect(throws: ExpiryError.self) {
            _ = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20, defaultTTL: .seconds(-5))
        }
        #expect(throws: ExpiryError.self) {
            _ = try KeyValueStoreLevel<String, String>(name: "kv", directory: dir.url, defaultTTL: .seconds(-5))
        }
        #expect(throws: Never.self) {
            _ = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20, defaultTTL: .zero)
        }
    }

    @Test func theMemoryLevelsSetsThrowItAndLeaveNoOlderValue() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20, defaultTTL: .seconds(-5))
        try await memory.set("kept", forKey: "k", expiresAt: SystemClock().now().advanced(by: .seconds(60)))  // its own deadline: stored
        await #expect(throws: ExpiryError.invalidTTL("-5.0 seconds (defaultTTL)")) { try await memory.set("v", forKey: "k") }
        #expect(memory.value(forKey: "k") == nil, "the failed set left the older value")
        let error = await #expect(throws: ExpiryError.self) { try await memory.set("v", forKey: "k") }
        #expect(error?.description == "invalid TTL -5.0 seconds (defaultTTL): a TTL must be zero or positive")
    }
}
