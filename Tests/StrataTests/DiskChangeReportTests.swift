import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a disk level's own writes report to the listeners in this process
/// (the other compositions over it, the explorer's event log) when they fail:
/// a failed set reports its key at most once, and only if its clean-up
/// deleted the older entry or, unable to (`EACCES`), made it a miss in this
/// level (what the level answers changed); a remove reports its key even
/// when it could not delete the entry: a level above may hold the value of
/// a set the disk refused.
///
/// A report is delivered in a task of its own, so the tests count the reports
/// the level made (``DiskCacheLevel/ownWritesReported``, final when the
/// operation returns) and then wait, polling with a deadline, for the
/// listener to have heard that many.
@Suite(.serialized) struct DiskChangeReportTests {
    /// What a listener on the level heard, in order.
    final class Heard: Sendable {
        private let list = Mutex<[CacheInvalidation<String>]>([])
        func append(_ invalidation: CacheInvalidation<String>) { list.withLock { $0.append(invalidation) } }
        var all: [CacheInvalidation<String>] { list.withLock { $0 } }
    }

    /// A disk level with a listener.
    struct Watched: Sendable {
        let disk: DiskCacheLevel<String, Data>
        let heard = Heard()
        let subscription: CacheSubscription

        init(_ directory: URL, capacity: Int = 1 << 20) throws {
            disk = try DiskCacheLevel<String, Data>(directory: directory, capacity: capacity)
            let heard = self.heard
            subscription = disk.subscribe { heard.append($0.invalidation) }
        }

        /// Waits until the listener has heard every report made so far; false
        /// if it has not within the deadline.
        func settle() async -> Bool {
            let sent = disk.ownWritesReported
            return await poll { heard.all.count >= sent }
        }

        /// The reports `body` made, once heard. `nil` if an earlier report or
        /// one of these was not heard within the deadline.
        func reports(during body: () async throws -> Void) async -> [CacheInvalidation<String>]? {
            guard await settle() else { return nil }
            let before = heard.all.count
            try? await body()
            guard await settle() else { return nil }
            return Array(heard.all.dropFirst(before))
        }
    }

    static func bytes(_ count: Int, _ fill: UInt8 = 7) -> Data { Data(repeating: fill, count: count) }

    // MARK: A failed set

    @Test func aSetTooLargeForTheLevelOverAnEntryReportsTheKeyOnce() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let watched = try Watched(dir.url, capacity: 1000)
        try await watched.disk.set(Self.bytes(10), forKey: "k")
        let reports = await watched.reports {
            await #expect(throws: DiskCacheError.self) { try await watched.disk.set(Self.bytes(2000), forKey: "k") }
        }
        #expect(reports == [.key("k")], "the older entry was deleted: one report")
        #expect(dir.entryFiles().isEmpty)
        #expect(try await watched.disk.getIfPresent("k") == nil)
    }

    @Test func aSetTooLargeForAKeyNotOnDiskReportsNothing() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let watched = try Watched(dir.url, capacity: 1000)
        let reports = await watched.reports {
            await #expect(throws: DiskCacheError.self) { try await watched.disk.set(Self.bytes(2000), forKey: "k") }
        }
        #expect(reports == [], "nothing changed on disk")
    }

    /// A real, tiny filesystem (tmpfs of 64 KiB, as ``DiskCacheLevelTests``
    /// does), filled up: the new entry's temporary file does not fit.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aSetFailedOnAFullDiskReportsTheKeyOnceOrNotAtAll() async throws {
        let dir = TemporaryDirectory("strata-full-report"); defer { dir.remove() }
        guard mount("tmpfs", dir.path, "tmpfs", 0, "size=64k") == 0 else {
            Issue.record("cannot mount a tmpfs at \(dir.path) (errno \(errno))")
            return
        }
        defer { umount(dir.path) }
        let watched = try Watched(dir.url, capacity: 10 << 20)
        try await watched.disk.set(Self.bytes(8000, 1), forKey: "old")
        try Self.fill(dir, leaving: 16 << 10)
        let overEntry = await watched.reports {
            let error = await #expect(throws: DiskCacheError.self) {
                try await watched.disk.set(Self.bytes(30000, 2), forKey: "old")
            }
            guard case .writeFailed(_, ENOSPC)? = error else {
                Issue.record("expected writeFailed(ENOSPC), got \(String(describing: error))")
                return
            }
        }
        #expect(overEntry == [.key("old")], "the older entry was deleted: one report")
        #expect(try await watched.disk.getIfPresent("old") == nil)
        let fresh = await watched.reports {
            await #expect(throws: DiskCacheError.self) { try await watched.disk.set(Self.bytes(60000, 3), forKey: "new") }
        }
        #expect(fresh == [], "nothing changed on disk")
    }

    /// The directory without write permission: the set cannot write, and its
    /// clean-up cannot delete the older entry, which stays on disk but is a
    /// miss in this level from then on (the value the set would replace is
    /// never served): the level's answer changed, the key is reported once.
    /// In a child process that gives up root first (root ignores permission bits).
    @Test func aSetFailedInAReadOnlyDirectoryReportsTheKeyAndServesNoOlderEntry() async {
        await #expect(processExitsWith: .success) {
            try await DiskChangeReportTests.asAnOrdinaryUser { dir, watched in
                try await watched.disk.set(DiskChangeReportTests.bytes(10, 1), forKey: "k")
                precondition(chmod(dir.path, 0o500) == 0)
                let reports = await watched.reports {
                    do {
                        try await watched.disk.set(DiskChangeReportTests.bytes(10, 2), forKey: "k")
                        preconditionFailure("the set succeeded in a read-only directory")
                    } catch DiskCacheError.writeFailed(_, let code) {
                        precondition(code == EACCES, "errno \(code)")
                    }
                }
                precondition(reports == [.key("k")], "reported \(String(describing: reports))")
                precondition(dir.entryFiles().count == 1, "the older entry is still on disk")
                let kept = try await watched.disk.getIfPresent("k")
                precondition(kept == nil, "the older entry is served after the set that would replace it threw")
            }
        }
    }

    /// Memory over a disk level whose directory became read-only: a set
    /// through the composition stores the new value in memory and fails on
    /// disk, which keeps the older entry on disk but answers it no more.
    /// The composition's clean-up removes it from disk, is refused too, and
    /// must still drop the new value from memory: else memory answers v2
    /// while the disk holds v1, and which one a get returns depends on what
    /// memory evicted (from a review). A get then finds nothing: neither v2
    /// nor v1, which the set was to replace.
    @Test func memoryOverADiskWhoseSetFailedKeepsNoValueTheDiskDoesNotHold() async {
        await #expect(processExitsWith: .success) {
            try await DiskChangeReportTests.asAnOrdinaryUser { dir, watched in
                let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
                let cache = memory + watched.disk
                try await cache.set(DiskChangeReportTests.bytes(10, 1), forKey: "k")
                precondition(chmod(dir.path, 0o500) == 0)
                do {
                    try await cache.set(DiskChangeReportTests.bytes(10, 2), forKey: "k")
                    preconditionFailure("the set succeeded in a read-only directory")
                } catch is LevelsFailedError {}
                let dropped = await poll { (try? await memory.getIfPresent("k")) != DiskChangeReportTests.bytes(10, 2) }
                precondition(dropped, "memory still holds the value the disk refused")
                let read = try await cache.getIfPresent("k")
                precondition(read == nil, "the get read \(read?.first ?? 0) after the set threw")
                precondition(memory.value(forKey: "k") == nil, "the get back-filled the older entry")
            }
        }
    }

    // MARK: A failed remove

    /// A remove refused with `EACCES` leaves the entry where it was, a miss
    /// in this level from then on, and is reported all the same: a level
    /// above may hold the value of a set that failed here (the composition's
    /// clean-up is this remove). Once the directory is writable again, the
    /// remove deletes it and reports it.
    @Test func aRemoveRefusedWithEACCESReportsTheKeyAndKeepsTheEntry() async {
        await #expect(processExitsWith: .success) {
            try await DiskChangeReportTests.asAnOrdinaryUser { dir, watched in
                try await watched.disk.set(DiskChangeReportTests.bytes(10, 1), forKey: "k")
                precondition(chmod(dir.path, 0o500) == 0)
                let refused = await watched.reports {
                    do {
                        try await watched.disk.remove("k")
                        preconditionFailure("the remove succeeded in a read-only directory")
                    } catch DiskCacheError.writeFailed(_, let code) {
                        precondition(code == EACCES, "errno \(code)")
                    }
                }
                precondition(refused == [.key("k")], "a refused remove reported \(String(describing: refused))")
                precondition(dir.entryFiles().count == 1 && watched.disk.count == 1)
                let kept = try await watched.disk.getIfPresent("k")
                precondition(kept == nil, "the entry the remove would end is served")
                precondition(chmod(dir.path, 0o700) == 0)
                let removed = await watched.reports { try await watched.disk.remove("k") }
                precondition(removed == [.key("k")], "the remove reported \(String(describing: removed))")
                precondition(dir.entryFiles().isEmpty)
            }
        }
    }

    /// A remove of a key with no entry on disk is still reported: a level
    /// above elsewhere may hold a value read before this level evicted it.
    @Test func aRemoveOfAKeyNotOnDiskIsReported() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let watched = try Watched(dir.url)
        let reports = await watched.reports { try await watched.disk.remove("absent") }
        #expect(reports == [.key("absent")])
    }

    // MARK: Helpers

    /// Runs `body` on a disk level in a fresh directory, as an ordinary user:
    /// a root process becomes `nobody` first (in the child of an exit test).
    static func asAnOrdinaryUser(_ body: (TemporaryDirectory, Watched) async throws -> Void) async throws {
        if geteuid() == 0 {
            precondition(setgroups(0, nil) == 0 && setgid(65534) == 0 && setuid(65534) == 0, "cannot become nobody")
        }
        alarm(30)
        let dir = TemporaryDirectory("strata-eacces")
        precondition(FileManager.default.fileExists(atPath: dir.path), "cannot create \(dir.path)")
        defer {
            chmod(dir.path, 0o700)
            dir.remove()
        }
        try await body(dir, try Watched(dir.url))
    }

    /// Fills the filesystem of `dir` with a file of its own, leaving about `free` bytes.
    static func fill(_ dir: TemporaryDirectory, leaving free: Int) throws {
        var info = statvfs()
        guard statvfs(dir.path, &info) == 0 else { throw POSIXError(.EIO) }
        let filler = Int(info.f_bavail) * Int(info.f_frsize) - free
        if filler > 0 { _ = FileManager.default.createFile(atPath: dir.path + "/filler", contents: bytes(filler, 0)) }
    }
}
