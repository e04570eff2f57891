import Foundation
import Strata
import StrataTestSupport
import Synchronization
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

    /// A clock that, the first time it is read after `arm`, runs `hook` to
    /// completion (on another task; the caller's thread waits): another
    /// writer acting between a read of the file and what the reader does next.
    final class InterruptingClock: CacheClock {
        let hook = Mutex<(@Sendable () async -> Void)?>(nil)
        let time: CacheInstant
        init(_ time: CacheInstant) { self.time = time }
        func now() -> CacheInstant {
            if let hook = hook.withLock({ hook in defer { hook = nil }; return hook }) {
                let done = DispatchSemaphore(value: 0)
                Task.detached { await hook(); done.signal() }
                _ = done.wait(timeout: .now() + 30)
            }
            return time
        }
    }

    /// A reader that finds the entry expired deletes it only if it is still
    /// the expired one: a fresh value another writer stored meanwhile stays.
    @Test func anExpiredReadNeverDeletesAFreshValueWrittenMeanwhile() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let start = SystemClock().now()
        let writer = try KeyValueStoreLevel<String, String>(name: "d", directory: dir.url)
        try await writer.set("old", forKey: "k", expiresAt: start.advanced(by: .seconds(1)))
        let clock = InterruptingClock(start.advanced(by: .seconds(10)))  // the reader sees "old" expired
        let reader = try KeyValueStoreLevel<String, String>(name: "d", directory: dir.url, clock: clock)
        clock.hook.withLock { $0 = { try? await writer.set("new", forKey: "k", expiresAt: start.advanced(by: .seconds(3600))) } }
        // The reader runs on a thread of its own: the clock blocks it while
        // the other writer runs on the shared pool, which it must not starve.
        let read = try await withTaskExecutorPreference(OwnThreadExecutor()) { try await reader.getIfPresent("k") }
        #expect(read == nil)  // it read "old", expired at its time
        #expect(try await writer.getIfPresent("k") == "new", "the expired read deleted the value written meanwhile")
    }
}
