import Foundation
import Dispatch
import Strata
import StrataTestSupport
import Testing

/// Processes sharing a disk directory agree: an entry another writer replaces
/// or deletes is dropped from the memory level above this process's disk
/// level (inotify).
@Suite struct DiskInvalidationTests {
    /// `memory + disk` on `dir`, plus a second disk level on the same
    /// directory standing for another process.
    struct Setup {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let disk: DiskCacheLevel<String, String>
        let other: DiskCacheLevel<String, String>
        let cache: ComposedCache<MemoryCacheLevel<String, String>, DiskCacheLevel<String, String>>

        init(_ dir: TemporaryDirectory) throws {
            disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
            other = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
            cache = memory + disk
        }

        /// Reads `key` through the composition until the memory level holds it.
        func warm(_ key: String) async throws -> String? {
            let value = try await cache.getIfPresent(key)
            await cache.waitForPendingWrites()
            return value
        }
    }

    @Test func anEntryReplacedByAnotherWriterIsDroppedAbove() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let s = try Setup(dir)
        try await s.disk.set("v1", forKey: "user:7")  // reported to the composition, at once
        #expect(await poll { (try? await s.warm("user:7")) == "v1" && s.memory.value(forKey: "user:7") == "v1" })
        try await s.other.set("v2", forKey: "user:7")
        #expect(await poll { s.memory.value(forKey: "user:7") == nil }, "the memory level kept the replaced value")
        #expect(try await s.cache.get("user:7") == "v2")
        #expect(s.disk.invalidationsReported >= 1)
    }

    @Test func anEntryDeletedByAnotherWriterIsDroppedAbove() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let s = try Setup(dir)
        try await s.cache.set("v", forKey: "k")
        try await s.other.remove("k")
        #expect(await poll { s.memory.value(forKey: "k") == nil })
        #expect(try await s.cache.getIfPresent("k") == nil)
    }

    @Test func ownWritesDoNotDropTheValueJustWritten() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let s = try Setup(dir)
        try await s.cache.set("mine", forKey: "own")
        try await s.cache.set("x", forKey: "marker")
        // Events arrive in order: once the other writer's change to the marker
        // is seen, our own write's event has been handled too.
        try await s.other.set("y", forKey: "marker")
        #expect(await poll { s.memory.value(forKey: "marker") == nil })
        #expect(s.memory.value(forKey: "own") == "mine")
    }

    @Test func aRenameByAnotherProcessIsSeen() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let staging = TemporaryDirectory(); defer { staging.remove() }
        let s = try Setup(dir)
        try await s.cache.set("old", forKey: "shared")
        // Another process (mv) renames a newer entry for the key into place.
        let writer = try DiskCacheLevel<String, String>(directory: staging.url, capacity: 1 << 20)
        try await writer.set("new", forKey: "shared")
        let file = try #require(staging.entryFiles().first)
        let mv = Process()
        mv.executableURL = URL(fileURLWithPath: "/bin/mv")
        mv.arguments = [staging.url.appendingPathComponent(file).path, dir.url.appendingPathComponent(file).path]
        try mv.run()
        mv.waitUntilExit()
        #expect(mv.terminationStatus == 0)
        #expect(await poll { s.memory.value(forKey: "shared") == nil })
        #expect(try await s.cache.get("shared") == "new")
    }

    @Test func aDeletedDirectoryClearsTheLevelsAboveAndIsWatchedAgain() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let s = try Setup(dir)
        try await s.cache.set("v", forKey: "a")
        try FileManager.default.removeItem(at: dir.url)
        #expect(await poll { s.memory.count == 0 }, "levels above kept entries of a deleted directory")
        try await s.cache.set("v2", forKey: "b")  // recreates the directory, reported as "anything changed"
        let reported = s.disk.invalidationsReported
        #expect(await poll { s.cache.invalidationsApplied >= reported })
        try await s.cache.set("v3", forKey: "b")
        #expect(s.memory.value(forKey: "b") == "v3")
        try await s.other.set("w", forKey: "b")
        #expect(await poll { s.memory.value(forKey: "b") == nil }, "the recreated directory is not watched")
    }

    @Test func aWriteAndARemoveByAnotherStrataProcessReachThisProcesssMemoryLevel() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        let cache = memory + disk
        try await cache.set(Data("mine".utf8), forKey: "user:7")
        func otherProcess(_ arguments: String...) async throws -> Int32 {
            let process = Process()
            process.executableURL = productsDirectory.appendingPathComponent("StrataDiskWorker")
            process.arguments = [dir.path] + arguments
            try process.run()
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { process.waitUntilExit(); continuation.resume() }
            }
            return process.terminationStatus
        }
        #expect(try await otherProcess("set", "user:7", "theirs") == 0)
        #expect(await poll { memory.value(forKey: "user:7") == nil }, "this process kept serving its old copy")
        #expect(try await cache.get("user:7") == Data("theirs".utf8))
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "user:7") == Data("theirs".utf8))
        #expect(try await otherProcess("remove", "user:7") == 0)
        #expect(await poll { memory.value(forKey: "user:7") == nil })
        #expect(try await cache.getIfPresent("user:7") == nil)
    }
}

extension DiskInvalidationTests {
    @Test func ownRemovesAndClearsOfTheDiskLevelAreNotReportedAbove() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let s = try Setup(dir)
        try await s.cache.set("a", forKey: "a")
        try await s.cache.set("b", forKey: "b")
        // The sets' own renames are handled first: one handled after the
        // clear below has deleted its file can no longer be told from a
        // foreign one, and is reported (a harmless extra invalidation, and
        // not what this test is about).
        try await s.cache.set("x", forKey: "settled")
        try await s.other.set("y", forKey: "settled")
        #expect(await poll { s.memory.value(forKey: "settled") == nil })
        let watched = s.disk.invalidationsReported
        // Directly, not through the composition: the level reports its own
        // writes to the compositions over it itself (the watch does not).
        try await s.disk.remove("a")
        #expect(await poll { s.memory.value(forKey: "a") == nil }, "a direct remove reaches the level above")
        #expect(s.memory.value(forKey: "b") == "b")
        await s.disk.clear()
        #expect(await poll { s.memory.value(forKey: "b") == nil }, "so does a direct clear")
        // Held above from now on: a report of the remove's or the clear's
        // delete, still to come from the watch, would drop them.
        try await s.memory.set("a2", forKey: "a")
        try await s.memory.set("b2", forKey: "b")
        try await s.cache.set("x", forKey: "marker")
        try await s.other.set("y", forKey: "marker")
        // Events arrive in order: once the marker's change is seen, the
        // remove's and clear's events have been handled too.
        #expect(await poll { s.memory.value(forKey: "marker") == nil })
        #expect(s.memory.value(forKey: "a") == "a2" && s.memory.value(forKey: "b") == "b2",
                "the watch reported this level's own remove or clear")
        // The other writer's change; twice when our own rename's event is
        // handled after the other writer replaced the file (it no longer
        // holds our entry, which is reported too).
        #expect((watched + 1...watched + 2).contains(s.disk.invalidationsReported),
                "the watch reported only the other writer's change: \(s.disk.invalidationsReported - watched)")
    }

    /// One disk level under two compositions in one process: a write through
    /// one drops the key from the other's memory level, not from its own.
    @Test func aWriteThroughOneCompositionReachesTheOtherOverTheSameLevel() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
        let memoryA = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let memoryB = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cacheA = memoryA + disk, cacheB = memoryB + disk
        try await cacheA.set("v1", forKey: "k")
        #expect(await poll { cacheB.invalidationsApplied == 1 })
        #expect(await poll {
            (try? await cacheB.getIfPresent("k")) == "v1" && memoryB.value(forKey: "k") == "v1"
        }, "B read it into its memory level")
        try await cacheA.set("v2", forKey: "k")
        #expect(await poll { memoryB.value(forKey: "k") == nil }, "B's memory level kept the value A replaced")
        #expect(memoryA.value(forKey: "k") == "v2", "A keeps what it wrote")
        #expect(cacheA.invalidationsApplied == 0)
        #expect(try await cacheB.get("k") == "v2")
    }
}
