import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The disk level's safety guarantees: a deleted directory is recreated, it
/// never unlinks an entry another writer just replaced, and what it creates
/// is private to its user.
@Suite struct DiskCacheLevelSafetyTests {
    func bytes(_ n: Int, _ fill: UInt8 = 7) -> Data { Data(repeating: fill, count: n) }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return info.st_mode & 0o777
    }

    @Test func deletedDirectoryIsRecreatedOnTheNextSet() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = dir.url.appendingPathComponent("cache")
        let level = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        try await level.set(bytes(100), forKey: "a")
        try await level.set(bytes(100), forKey: "b")
        try FileManager.default.removeItem(at: cache)  // a user cleaning ~/.cache

        try await level.set(bytes(50, 9), forKey: "c")
        #expect(try await level.get("c") == bytes(50, 9))
        #expect(try await level.getIfPresent("a") == nil)
        #expect(level.count == 1, "entries that vanished with the directory are gone from the index")
        #expect(level.totalSize == 56 + 5 + 1 + 50)
        #expect(level.directoryRecreations == 1)
        #expect(mode(cache.path) == 0o700)
    }

    @Test func missingDirectoryIsNoticedByAReadOfAKnownEntry() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        for key in ["a", "b", "c"] { try await level.set(bytes(10), forKey: key) }
        try FileManager.default.removeItem(at: dir.url)
        #expect(try await level.getIfPresent("a") == nil)
        #expect(level.count == 0 && level.totalSize == 0)
        #expect(level.directoryRecreations == 1)
        try await level.set(bytes(10), forKey: "d")
        #expect(level.directoryRecreations == 1)
        #expect(dir.entryFiles().count == 1)
    }

    @Test func filesAndDirectoriesItCreatesArePrivate() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let parent = dir.url.appendingPathComponent("parent")
        let cache = parent.appendingPathComponent("cache")
        let level = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        try await level.set(bytes(10), forKey: "k")
        #expect(mode(parent.path) == 0o700)
        #expect(mode(cache.path) == 0o700)
        let entries = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasSuffix(".entry") }
        #expect(entries.count == 1)
        for name in entries { #expect(mode(cache.path + "/" + name) == 0o600, "entry \(name)") }
        #expect(mode(cache.path + "/.lock") == 0o600)
        // The files beside the entries: a remove's tombstone and lock, and
        // the coherence mark (written when a stack over the level goes).
        try await level.remove("k")
        level.lostCoherence()
        #expect(mode(cache.path + "/.delete-lock") == 0o600)
        #expect(mode(cache.path + "/.strata-tombstones") == 0o700)
        let tombstones = try FileManager.default.contentsOfDirectory(atPath: cache.path + "/.strata-tombstones")
        #expect(!tombstones.isEmpty)
        for name in tombstones { #expect(mode(cache.path + "/.strata-tombstones/" + name) == 0o600, "tombstone \(name)") }
        #expect(mode(cache.path + "/.strata-coherent-since") == 0o600, "the coherence mark")
    }

    // Two levels on one directory stand for two processes: each decides on
    // the content it knows, while the other replaces the file.

    @Test func removeExpiredNeverDeletesAnEntryAnotherWriterReplaced() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()
        let first = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, clock: clock)
        let second = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, clock: clock)
        try await first.set(bytes(10, 1), forKey: "k", ttl: .seconds(5))
        try await second.set(bytes(10, 2), forKey: "k")  // no expiry
        clock.advance(by: .seconds(10))
        await first.removeExpired()
        #expect(try await second.getIfPresent("k") == bytes(10, 2))
        #expect(dir.entryFiles().count == 1)
    }

    @Test func evictionNeverDeletesAnEntryAnotherWriterReplaced() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let entrySize = 56 + 5 + 2 + 100
        let small = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 2 * entrySize)
        let other = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        try await small.set(bytes(100, 1), forKey: "k1")
        try await small.set(bytes(100, 1), forKey: "k2")
        try await other.set(bytes(100, 2), forKey: "k1")  // replaces k1's file
        try await small.set(bytes(100, 1), forKey: "k3")  // small evicts its old k1
        #expect(small.evictions == 1)
        #expect(try await other.getIfPresent("k1") == bytes(100, 2))
    }

    @Test func expiredReadNeverDeletesAnEntryAnotherWriterReplaced() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let elsewhere = TemporaryDirectory(); defer { elsewhere.remove() }
        let clock = TestClock()
        let reader = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, clock: clock)
        try await reader.set(bytes(10, 1), forKey: "k", expiresAt: clock.now())  // already expired
        // Another writer's fresh entry, written beside the directory, to be renamed in.
        let writer = try DiskCacheLevel<String, Data>(directory: elsewhere.url, capacity: 1 << 20, clock: clock)
        try await writer.set(bytes(10, 2), forKey: "k")
        let name = try #require(elsewhere.entryFiles().first)
        // The reader has read the expired file and decided to delete it when
        // the other writer renames its fresh entry into place.
        let renamed = Flag()
        reader.beforeDeletingFile = { _ in
            if renamed.set() {
                rename(elsewhere.path + "/" + name, dir.path + "/" + name)
            }
        }
        #expect(try await reader.getIfPresent("k") == nil)
        #expect(renamed.isSet)
        #expect(try await reader.getIfPresent("k") == bytes(10, 2), "the fresh entry survived")
    }

    /// Owners set their keys, alternating an already-expired value and a fresh
    /// one, and read the fresh one straight back; readers and a sweeper delete
    /// expired copies of the same keys meanwhile, and small entries evict.
    /// A fresh value must be readable until its owner overwrites it.
    @Test func concurrentSetsStayReadableWhileReadersAndSweepsDeleteExpiredCopies() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()
        let keysPerOwner = 8, owners = 2, rounds = 400
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, clock: clock)
        let lost = Flag(), stop = Flag()
        await withTaskGroup(of: Void.self) { group in
            for owner in 0..<owners {
                group.addTask {
                    for round in 0..<rounds {
                        let key = "o\(owner)-\(round % keysPerOwner)"
                        let fresh = Data("\(key)#\(round)".utf8)
                        try? await level.set(Data("stale".utf8), forKey: key, expiresAt: clock.now())
                        try? await level.set(fresh, forKey: key)
                        if (try? await level.getIfPresent(key)) != fresh { lost.set() }
                    }
                }
            }
            group.addTask {
                var i = 0
                while !stop.isSet {
                    _ = try? await level.getIfPresent("o\(i % owners)-\((i / owners) % keysPerOwner)")
                    if i % 16 == 0 { await level.removeExpired() }
                    i += 1
                    await Task.yield()
                }
            }
            for _ in 0..<owners { await group.next() }
            stop.set()
        }
        #expect(!lost.isSet, "fresh values deleted by a reader or sweeper that decided on an expired copy")
        for owner in 0..<owners {
            for k in 0..<keysPerOwner {
                let last = (0..<rounds).last { $0 % keysPerOwner == k }!
                #expect(try await level.getIfPresent("o\(owner)-\(k)") == Data("o\(owner)-\(k)#\(last)".utf8))
            }
        }
    }
}

/// A flag shared between tasks.
private final class Flag: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    /// Sets the flag; true if this call set it.
    @discardableResult func set() -> Bool { !value.exchange(true, ordering: .acquiringAndReleasing) }
}
