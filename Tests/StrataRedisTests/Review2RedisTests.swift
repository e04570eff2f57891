import Foundation
import Strata
import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

@Suite(.serialized) struct Review2RedisTests {
    struct Profile: Codable, Equatable, Sendable { var name: String }

    /// 76b95ef: two versions of an application share a prefix during a
    /// rolling deploy, each unable to decode the other's format. Before,
    /// version B's back-fill was declined (SET NX) and version A kept hitting;
    /// now each version's miss replaces the other's value (EVAL
    /// compare-and-set), so neither hits and every read reaches its origin.
    @Test func twoVersionsSharingAPrefixDoNotOverwriteEachOther() async throws {
        let server = try await RedisServer()
        let levelA = try RedisCacheLevel<String, Profile>(url: server.url, prefix: "mv:")
        let levelB = try RedisCacheLevel<String, [Int]>(url: server.url, prefix: "mv:")
        let fetchesA = Atomic<Int>(0), fetchesB = Atomic<Int>(0)
        let cacheA = levelA + BasicFetcher<String, Profile> { _ in fetchesA.add(1, ordering: .relaxed); return Profile(name: "Ada") }
        let cacheB = levelB + BasicFetcher<String, [Int]> { _ in fetchesB.add(1, ordering: .relaxed); return [1, 2] }
        for _ in 0..<5 {
            #expect(try await cacheA.get("k") == Profile(name: "Ada"))
            await cacheA.waitForPendingWrites()
            #expect(try await cacheB.get("k") == [1, 2])
            await cacheB.waitForPendingWrites()
        }
        #expect(fetchesA.load(ordering: .relaxed) == 1, "version A went to its origin \(fetchesA.load(ordering: .relaxed)) times")
        await levelA.shutdown(); await levelB.shutdown(); await server.kill()
    }
}
