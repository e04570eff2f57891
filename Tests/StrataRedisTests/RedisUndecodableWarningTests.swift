import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

extension RedisInvalidationTests {
    /// A value that does not decode is a miss, counted, and said in the log
    /// (#32: it was silent): once, naming the level, key and codec, then at
    /// most once per 10 s with a count.
    @Test func anUndecodableValueIsLoggedOnceThenCounted() async throws {
        struct User: Codable, Sendable { let id: Int }
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, User>(url: server.url, prefix: "undecodable:", invalidatesLevelsAbove: false)
        _ = try await redis.client.send("SET", "undecodable:user:7", "not json")
        for _ in 0..<3 { #expect(try await redis.getIfPresent("user:7") == nil) }
        #expect(redis.decodeFailures == 3)
        #expect(redis.warnings.undecodable.logged == 1, "logged once, then counted for the next line")
        await redis.shutdown(); await server.kill()
    }
}
