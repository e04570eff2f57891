import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A back-fill replaces nothing (``Backfill``): a level shared with another
/// process (or another level object on the same files) that holds a value
/// for the key now got it after the read below missed, so that value is
/// newer. Before the fix the disk and key-value store levels wrote back-fills
/// like sets, and an origin read that began before another process's set
/// overwrote that set's value in the shared store for every process.
@Suite struct SharedStoreBackfillTests {
    /// `shared + origin` where the origin's read is held at a gate; `write`
    /// runs while it is held, then the read answers "old".
    func backfillRacing<Level: CacheLevel>(
        _ shared: Level, _ write: () async throws -> Void
    ) async throws -> (answer: String?, stack: ComposedCache<Level, FakeLevel<String, String>>)
    where Level.Key == String, Level.Value == String {
        let origin = FakeLevel<String, String>(name: "origin", ["k": "old"])
        let gate = Gate()
        origin.holdGets(on: gate)
        let stack = shared + origin
        let read = Task { try await stack.getIfPresent("k") }
        #expect(await yieldUntil { gate.waiting == 1 })
        try await write()
        gate.open()
        let answer = try await read.value
        await stack.waitForPendingWrites()
        return (answer, stack)
    }

    @Test func aDiskBackfillDoesNotOverwriteAnotherWritersNewerValue() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let mine = try DiskCacheLevel<String, String>(name: "d", directory: dir.url, capacity: 1 << 20)
        let theirs = try DiskCacheLevel<String, String>(name: "d", directory: dir.url, capacity: 1 << 20)
        let (answer, stack) = try await backfillRacing(mine) { try await theirs.set("new", forKey: "k") }
        #expect(answer == "old")
        #expect(try await theirs.getIfPresent("k") == "new", "the back-fill of a read begun before the set overwrote it")
        #expect(try await mine.getIfPresent("k") == "new")
        #expect(stack.backfillsSkipped == 1)
    }

    /// The same where the level's directory cannot be watched (the inotify
    /// limit reached), so no report of the other writer's set can drop the
    /// back-fill first: the rename itself must not replace it. (With a watch
    /// the report usually arrives first; the rename still races it.)
    @Test func anUnwatchedDiskBackfillDoesNotOverwriteAnotherWritersNewerValue() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        InotifyHub.failingPaths.withLock { $0[dir.path] = ENOSPC }
        defer { InotifyHub.failingPaths.withLock { $0[dir.path] = nil } }
        let mine = try DiskCacheLevel<String, String>(name: "d", directory: dir.url, capacity: 1 << 20)
        let theirs = try DiskCacheLevel<String, String>(name: "d", directory: dir.url, capacity: 1 << 20)
        let (answer, stack) = try await backfillRacing(mine) { try await theirs.set("new", forKey: "k") }
        #expect(answer == "old")
        #expect(try await theirs.getIfPresent("k") == "new", "the back-fill of a read begun before the set overwrote it")
        #expect(stack.backfillsSkipped == 1)
    }

    @Test func aDiskBackfillStillFillsAMissAndReplacesAnExpiredEntry() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()
        let mine = try DiskCacheLevel<String, String>(name: "d", directory: dir.url, capacity: 1 << 20, clock: clock)
        let origin = FakeLevel<String, String>(name: "origin", ["k": "fresh"])
        try await mine.set("short", forKey: "k", expiresAt: clock.now().advanced(by: .seconds(1)))
        clock.advance(by: .seconds(2))
        let stack = mine + origin
        #expect(try await stack.getIfPresent("k") == "fresh")
        await stack.waitForPendingWrites()
        #expect(try await mine.getIfPresent("k") == "fresh")
        #expect(stack.backfillsSkipped == 0)
        // A miss with no file at all is filled as before.
        let other = FakeLevel<String, String>(name: "origin", ["j": "filled"])
        let second = mine + other
        #expect(try await second.getIfPresent("j") == "filled")
        await second.waitForPendingWrites()
        #expect(try await mine.getIfPresent("j") == "filled")
    }

    /// An entry written while nothing kept the level coherent reads as a miss
    /// and is left for the back-fill that replaces it (``CacheLevel/lostCoherence()``).
    @Test func aDiskBackfillReplacesAnEntryOlderThanTheLevelsCoherence() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let mine = try DiskCacheLevel<String, String>(name: "d", directory: dir.url, capacity: 1 << 20)
        try await mine.set("before", forKey: "k")
        mine.lostCoherence()
        #expect(try await mine.getIfPresent("k") == nil)
        let stack = mine + FakeLevel<String, String>(name: "origin", ["k": "after"])
        #expect(try await stack.getIfPresent("k") == "after")
        await stack.waitForPendingWrites()
        #expect(try await mine.getIfPresent("k") == "after")
    }

    @Test func aKeyValueStoreBackfillDoesNotOverwriteAnotherWritersNewerValue() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let mine = try KeyValueStoreLevel<String, String>(name: "kv", directory: dir.url, codec: .string)
        let theirs = try KeyValueStoreLevel<String, String>(name: "kv", directory: dir.url, codec: .string)
        let (answer, stack) = try await backfillRacing(mine) { try await theirs.set("new", forKey: "k") }
        #expect(answer == "old")
        #expect(try await theirs.getIfPresent("k") == "new", "the back-fill of a read begun before the set overwrote it")
        #expect(stack.backfillsSkipped == 1)
        // A plain miss is still filled.
        let filled = mine + FakeLevel<String, String>(name: "origin", ["j": "filled"])
        #expect(try await filled.getIfPresent("j") == "filled")
        await filled.waitForPendingWrites()
        #expect(try await mine.getIfPresent("j") == "filled")
    }
}
