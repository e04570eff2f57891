import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// A single server out of memory refuses a clear's tombstone script while its
/// `SCAN` and `UNLINK` still work: the clear reported success with no
/// tombstone (the script was sent with `try?`), so a back-fill begun before
/// the clear could bring an old value back. It now fails, naming the
/// refusal, once the keys are unlinked; with a backlog it is replayed.
@Suite struct RedisClearTombstoneTests {
    @Test func aClearWhoseTombstoneIsRefusedFails() async throws {
        let server = try await RedisServer()
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "clt:", codec: .string,
                                                         invalidatesLevelsAbove: false)
        for index in 0..<30 { try await level.set("v", forKey: "k\(index)") }
        _ = try await redisCLI(server, "CONFIG", "SET", "maxmemory", "1")
        await #expect {
            try await level.clearPrefix()
        } throws: { error in
            "\(error)".contains("OOM") && "\(error)".contains("tombstone")
        }
        #expect(level.warnings.clearTombstonesFailed.logged == 1)
        _ = try await redisCLI(server, "CONFIG", "SET", "maxmemory", "0")
        #expect(try await level.getIfPresent("k0") == nil, "the keys were unlinked all the same")
        await level.shutdown(); await server.kill()
    }

    @Test func aClearWhoseTombstoneFailedIsReplayedUntilItIsWritten() async throws {
        let server = try await RedisServer()
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "cltr:", codec: .string,
                                                         invalidatesLevelsAbove: false, outageBacklog: 100)
        for index in 0..<30 { try await level.set("v", forKey: "k\(index)") }
        _ = try await redisCLI(server, "CONFIG", "SET", "maxmemory", "1")
        try await level.clearPrefix()
        #expect(level.writesAwaitingReplay == 1, "the clear was not kept for replay")
        _ = try await redisCLI(server, "CONFIG", "SET", "maxmemory", "0")
        #expect(await poll { level.writesAwaitingReplay == 0 })
        let tombstone = level.tombstoneOfAll(for: level.prefix)
        #expect(try await level.client.send([RedisCommandName.exists, tombstone]) == .integer(1), "no clear tombstone")
        await level.shutdown(); await server.kill()
    }
}
