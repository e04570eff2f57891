import Foundation
@testable import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// A set whose value does not encode fails, and leaves no older value behind
/// (as the disk and key-value store levels do); a back-fill that does not
/// encode leaves what Redis holds, which is newer than the read.
@Suite(.serialized) struct RedisFailedEncodeTests {
    @Test func aSetThatDoesNotEncodeRemovesTheOldValue() async throws {
        let server = try await RedisServer()
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "enc:", codec: OwnWriteReportRaceTests.picky)
        try await level.set("old", forKey: "k")
        await #expect(throws: (any Error).self) { try await level.set("bad", forKey: "k") }
        #expect(try await level.getIfPresent("k") == nil, "the value the failed set replaced is gone")

        // A back-fill that does not encode leaves the key alone.
        try await level.set("newer", forKey: "b")
        await #expect(throws: (any Error).self) {
            try await level.backfill(Backfill(value: "bad", expiresAt: nil, readStartedAt: .now), forKey: "b")
        }
        #expect(try await level.getIfPresent("b") == "newer")
        await level.shutdown(); await server.kill()
    }
}
