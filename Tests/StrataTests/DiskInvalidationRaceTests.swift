import Dispatch
import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Changes by another writer that land while this process is between two
/// steps of its own work (a read, a lost watch) still reach the levels above.
@Suite struct DiskInvalidationRaceTests {
    /// Blocks the next decode (once armed) until released, so a test can act
    /// while a read holds the bytes it read but has not returned yet. `decode`
    /// is synchronous, so this blocks the reading thread (a semaphore, with a
    /// deadline so a broken test fails instead of hanging): run the read on a
    /// ``OwnThreadExecutor``, never on the shared cooperative pool.
    final class DecodeGate: Sendable {
        private let armed = Atomic<Bool>(false)
        private let blocked = Atomic<Bool>(false)
        private let released = DispatchSemaphore(value: 0)

        var isBlocked: Bool { blocked.load(ordering: .acquiring) }
        func arm() { armed.store(true, ordering: .releasing) }
        func release() { released.signal() }

        func pass() {
            guard armed.exchange(false, ordering: .acquiringAndReleasing) else { return }
            blocked.store(true, ordering: .releasing)
            _ = released.wait(timeout: .now() + 30)
        }

        var codec: CacheCodec<String> {
            CacheCodec(name: "gated", encode: { Data($0.utf8) }, decode: { [self] data in
                pass()
                return String(decoding: data, as: UTF8.self)
            })
        }
    }

    /// The first read of an entry another writer wrote: the other writer
    /// replaces it after this read has read the old bytes but before the read
    /// returns. The replacement must be reported, so the old value's back-fill
    /// never settles in memory. With `indexedAtStart` the entry was on disk
    /// when this level started (so it is in its index, and a read does not
    /// re-check the file).
    @Test(arguments: [false, true])
    func aReplaceDuringTheFirstReadOfAnotherWritersEntryReachesTheLevelsAbove(indexedAtStart: Bool) async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let gate = DecodeGate()
        let other = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20, codec: gate.codec)
        if indexedAtStart { try await other.set("v1", forKey: "k") }
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20, codec: gate.codec)
        let cache = memory + disk
        if !indexedAtStart { try await other.set("v1", forKey: "k") }
        try await cache.set("x", forKey: "marker")

        gate.arm()
        let read = Task(executorPreference: OwnThreadExecutor()) { try await cache.get("k") }
        #expect(await poll { gate.isBlocked }, "the read never reached decode")
        try await other.set("v2", forKey: "k")
        // Events are handled in order: once the marker's change has been
        // applied above, so has (or was ignored) the replacement of k.
        try await other.set("y", forKey: "marker")
        #expect(await poll { memory.value(forKey: "marker") == nil })
        gate.release()
        _ = try await read.value  // v1 is a fine answer: it was read before the replace
        await cache.waitForPendingWrites()

        #expect(memory.value(forKey: "k") != "v1", "the memory level keeps a value another writer replaced")
        #expect(try await cache.get("k") == "v2")
    }

    /// The directory is deleted and another writer (not this level) creates it
    /// again, so this level never finds it missing itself: it must still watch
    /// the new directory, or every later change by others goes unreported
    /// while the memory level above keeps serving the old values.
    @Test func aDirectoryRecreatedByAnotherWriterIsWatchedAgain() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let s = try DiskInvalidationTests.Setup(dir)
        try await s.cache.set("v", forKey: "a")
        try FileManager.default.removeItem(at: dir.url)
        #expect(await poll { s.memory.count == 0 }, "levels above kept entries of a deleted directory")
        try await s.other.set("v2", forKey: "b")  // the other writer creates the directory again
        #expect(try await s.warm("b") == "v2")
        // Events are handled in order: once the marker's change is applied,
        // whatever re-watching reported before it has been applied too.
        try await s.cache.set("x", forKey: "marker")
        try await s.other.set("y", forKey: "marker")
        #expect(await poll { s.memory.value(forKey: "marker") == nil }, "the recreated directory is not watched")
        #expect(try await s.warm("b") == "v2")
        #expect(s.memory.value(forKey: "b") == "v2")
        try await s.other.set("v3", forKey: "b")
        #expect(await poll { s.memory.value(forKey: "b") == nil }, "the memory level keeps a value another writer replaced")
        #expect(try await s.cache.get("b") == "v3")
    }

    /// This level removes an entry while its watch is lost, so the event it
    /// expects for its own delete never comes. Once watched again, another
    /// writer's delete of that entry must not be taken for that one.
    @Test func anOwnDeleteMadeWhileUnwatchedDoesNotHideALaterDeleteByAnotherWriter() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let s = try DiskInvalidationTests.Setup(dir)
        try await s.cache.set("v", forKey: "a")
        try FileManager.default.removeItem(at: dir.url)
        // Cleared once the loss is handled, which found no directory to watch.
        #expect(await poll { s.memory.count == 0 })
        try await s.other.set("v1", forKey: "k")  // the other writer creates the directory again
        try await s.disk.remove("k")  // unwatched: its delete event never comes
        try await s.other.set("v2", forKey: "k")
        #expect(try await s.warm("k") == "v2")  // watches the directory again
        try await s.cache.set("x", forKey: "marker")
        try await s.other.set("y", forKey: "marker")
        #expect(await poll { s.memory.value(forKey: "marker") == nil })
        #expect(try await s.warm("k") == "v2")
        #expect(s.memory.value(forKey: "k") == "v2")
        try await s.other.remove("k")
        #expect(await poll { s.memory.value(forKey: "k") == nil }, "another writer's delete was taken for this level's own")
        #expect(try await s.cache.getIfPresent("k") == nil)
    }
}
