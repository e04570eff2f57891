import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Every disk level of a process watches its directory through one inotify
/// instance. The kernel gives each user 128 instances by default, across
/// all of that user's processes; with one per level, the 129th level (or a
/// few processes with a few levels each) could not watch, and the memory
/// levels above it kept values that other writers had replaced.
@Suite(.serialized) struct InotifyHubTests {
    /// Inotify instances this process holds (`anon_inode:inotify` descriptors).
    static func inotifyInstances() -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == "anon_inode:inotify" }.count
    }

    @Test func manyDiskLevelsShareOneInstanceAndAllHearOtherWriters() async throws {
        let count = 130  // above the default per-user limit of 128 instances
        let dir = TemporaryDirectory(); defer { dir.remove() }
        var caches: [(memory: MemoryCacheLevel<String, String>,
                      cache: ComposedCache<MemoryCacheLevel<String, String>, DiskCacheLevel<String, String>>)] = []
        for _ in 0..<count {
            let memory = MemoryCacheLevel<String, String>(capacity: 1 << 16)
            let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 16)
            caches.append((memory, memory + disk))  // composing starts the disk level's watch
        }
        #expect(Self.inotifyInstances() <= 1, "one inotify instance for the process, not one per level")
        let other = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 16)
        try await other.set("v1", forKey: "k")
        // Each memory level keeps v1 (read again: hearing v1's own arrival late drops it once).
        #expect(await poll {
            for entry in caches where entry.memory.value(forKey: "k") != "v1" {
                _ = try? await entry.cache.get("k")
                await entry.cache.waitForPendingWrites()
            }
            return caches.allSatisfy { $0.memory.value(forKey: "k") == "v1" }
        })
        try await other.set("v2", forKey: "k")
        _ = await poll { caches.allSatisfy { $0.memory.value(forKey: "k") == nil } }
        let stale = caches.filter { $0.memory.value(forKey: "k") != nil }.count
        #expect(stale == 0, "\(stale) of \(count) memory levels kept a value another writer replaced")
        for entry in caches.prefix(3) { #expect(try await entry.cache.get("k") == "v2") }
    }

    /// Two levels of one process on one directory share inotify's single
    /// watch of it: one shutting down leaves the other hearing changes.
    @Test func aLevelThatStopsWatchingLeavesTheOtherOnTheSameDirectoryWatching() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let memoryA = MemoryCacheLevel<String, String>(capacity: 1 << 16)
        let memoryB = MemoryCacheLevel<String, String>(capacity: 1 << 16)
        let diskA = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 16)
        let diskB = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 16)
        let writer = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 16)
        let a = memoryA + diskA, b = memoryB + diskB
        try await a.set("a1", forKey: "k")
        // B may hear A's write after its read back-filled it (and drop it): read until it keeps it.
        #expect(await poll {
            _ = try? await b.get("k")
            await b.waitForPendingWrites()
            return memoryB.value(forKey: "k") == "a1"
        })
        await diskA.shutdown()
        try await writer.set("w", forKey: "k")
        #expect(await poll { memoryB.value(forKey: "k") == nil }, "B stopped hearing the directory when A stopped")
        #expect(try await b.get("k") == "w")
        _ = a
    }

    /// A directory that cannot be watched (the per-user watch limit, here
    /// injected for this directory only) leaves the levels above keeping
    /// nothing from the disk level: another writer's change is never served
    /// stale. Once it can be watched again, they keep values as before.
    /// (Before, a warning was logged and the memory level above served the
    /// replaced value until its TTL.)
    @Test func aDirectoryThatCannotBeWatchedKeepsNothingAbove() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let path = dir.url.path
        InotifyHub.failingPaths.withLock { $0[path] = ENOSPC }
        defer { InotifyHub.failingPaths.withLock { $0[path] = nil } }
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 16)
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 16)
        let other = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 16)
        let cache = memory + disk
        try await other.set("v1", forKey: "k")
        #expect(try await cache.get("k") == "v1")
        await cache.waitForPendingWrites()
        try await other.set("v2", forKey: "k")
        #expect(try await cache.get("k") == "v2", "the memory level above served a value another writer replaced")
        await cache.waitForPendingWrites()
        // The read's report ("anything may have changed") is delivered in a
        // task of its own: it voids the back-fill, or empties the level after it.
        #expect(await poll { memory.value(forKey: "k") == nil }, "nothing kept above an unwatched level")

        // Watchable again: the next read watches it, and values stay above.
        InotifyHub.failingPaths.withLock { $0[path] = nil }
        #expect(await poll {
            _ = try? await cache.get("k")
            await cache.waitForPendingWrites()
            return memory.value(forKey: "k") == "v2"
        })
        try await other.set("v3", forKey: "k")
        #expect(await poll { memory.value(forKey: "k") == nil }, "watched again: another writer's change reaches the level above")
        #expect(try await cache.get("k") == "v3")
    }
}
