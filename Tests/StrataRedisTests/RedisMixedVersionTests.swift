import Foundation
import Strata
import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

@Suite(.serialized) struct RedisMixedVersionTests {
    struct Profile: Codable, Equatable, Sendable { var name: String }

    /// Two versions of an application share a prefix during a rolling
    /// deploy, each unable to decode the other's format: the value in Redis
    /// is left alone (replacing it made the versions overwrite each other on
    /// every miss), so the first version keeps hitting.
    @Test func twoVersionsSharingAPrefixDoNotOverwriteEachOther() async throws {
        let server = try await RedisServer()
        let levelA = try RedisCacheLevel<String, Profile>(url: server.url, prefix: "mv:")
        let levelB = try RedisCacheLevel<String, [Int]>(url: server.url, prefix: "mv:")
        let fetchesA = Atomic<Int>(0), fetchesB = Atomic<Int>(0)
        let cacheA = levelA + BasicFetcher<String, Profile> { _ in fetchesA.add(1, ordering: .relaxed); return Profile(name: "Ada") }
        let cacheB = levelB + BasicFetcher<String, [Int]> { _ in fetchesB.add(1, ordering: .relaxed); return [1, 2] }
        // Version A's value reaches Redis first. On a busy machine a
        // back-fill may be taken back (a read older than the level's margin),
        // so A reads until one has landed (bounded); B has not run yet.
        let deadline = ContinuousClock.now + .seconds(10)
        repeat {
            #expect(try await cacheA.get("k") == Profile(name: "Ada"))
            await cacheA.waitForPendingWrites()
        } while try await levelA.getIfPresent("k") == nil && ContinuousClock.now < deadline
        try #require(try await levelA.getIfPresent("k") == Profile(name: "Ada"), "A's back-fill never landed")
        let fetchesBefore = fetchesA.load(ordering: .relaxed)
        for _ in 0..<5 {
            #expect(try await cacheB.get("k") == [1, 2])
            await cacheB.waitForPendingWrites()
            #expect(try await cacheA.get("k") == Profile(name: "Ada"))
            await cacheA.waitForPendingWrites()
        }
        let fetches = fetchesA.load(ordering: .relaxed) - fetchesBefore
        #expect(fetches == 0, "version A went to its origin \(fetches) more times: B replaced its value")
        #expect(fetchesB.load(ordering: .relaxed) >= 5, "B never decodes A's value, so it reads its origin each time")
        await levelA.shutdown(); await levelB.shutdown(); await server.kill()
    }
}
