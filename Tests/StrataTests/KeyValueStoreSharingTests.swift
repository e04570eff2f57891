import Foundation
import Strata
import StrataTestSupport
import Testing

/// Several levels (standing for several processes) on one domain file agree
/// and never lose each other's writes.
@Suite struct KeyValueStoreSharingTests {
    @Test func aWriteByAnotherLevelIsReadNotTheStaleSoftCopy() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let a = try KeyValueStoreLevel<String, String>(name: "settings", directory: dir.url)
        let b = try KeyValueStoreLevel<String, String>(name: "settings", directory: dir.url)
        try await a.set("light", forKey: "theme")
        #expect(try await b.get("theme") == "light")
        try await b.set("dark", forKey: "theme")
        #expect(try await a.get("theme") == "dark", "a answered from its stale soft copy")
        try await b.remove("theme")
        #expect(try await a.getIfPresent("theme") == nil)
    }

    @Test func concurrentWritersOnOneDomainLoseNothing() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let levels = try (0..<4).map { _ in try KeyValueStoreLevel<String, String>(name: "shared", directory: dir.url) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, level) in levels.enumerated() {
                group.addTask {
                    for j in 0..<25 { try await level.set("\(i)-\(j)", forKey: "k\(i)-\(j)") }
                }
            }
            try await group.waitForAll()
        }
        let fresh = try KeyValueStoreLevel<String, String>(name: "shared", directory: dir.url)
        #expect(fresh.count == 100, "writes were lost: \(fresh.count) of 100 keys")
        for level in levels { #expect(level.count == 100) }
    }

    @Test func anEntryCarriesItsExpiryAndAPre1970DeadlineIsPast() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()
        let store = try KeyValueStoreLevel<String, String>(name: "d", directory: dir.url, clock: clock)
        try await store.set("v", forKey: "k", ttl: .seconds(10))
        #expect(try await store.entry(forKey: "k")?.expiresAt == clock.now().advanced(by: .seconds(10)))
        try await store.set("v", forKey: "old", expiresAt: CacheInstant(nanosecondsSince1970: 0))
        #expect(try await store.getIfPresent("old") == nil)
    }
}
