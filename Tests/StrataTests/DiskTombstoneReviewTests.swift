import Foundation
@testable import Strata
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Review of the disk level's tombstones (d9959bb): removes and clears that
/// must leave a tombstone a back-fill can see, in a deleted directory and on
/// a full disk. Two levels on one directory stand for two processes.
@Suite struct DiskTombstoneReviewTests {
    /// Runs `body` on a real, tiny filesystem (tmpfs of 64 KiB, as
    /// ``DiskCacheLevelTests`` does, unless `size` says otherwise) mounted at a temporary directory.
    static func onTmpfs(_ name: String, size: String = "64k", _ body: (TemporaryDirectory) async throws -> Void) async throws {
        let dir = TemporaryDirectory(name); defer { dir.remove() }
        guard mount("tmpfs", dir.path, "tmpfs", 0, "size=\(size)") == 0 else {
            Issue.record("cannot mount a tmpfs at \(dir.path) (errno \(errno))")
            return
        }
        defer { umount(dir.path) }
        try await body(dir)
    }

    /// The cache directory deleted (a user cleaning ~/.cache) while another
    /// process's load is in flight: the remove found nothing to delete, as
    /// before the tombstones, and must not fail for want of the tombstones'
    /// directory; and the load, whose landing recreates the directory, must
    /// not bring back what the remove ended.
    @Test func aRemoveInADeletedDirectorySucceedsAndStopsALoadInFlight() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = dir.url.appendingPathComponent("cache")
        let disk = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        let other = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        try await disk.set(Data("old".utf8), forKey: "k")
        let readStart = ContinuousClock.now  // the load of the old origin value begins
        try FileManager.default.removeItem(at: cache)
        // Another process changed the origin and removes the key.
        await #expect(throws: Never.self, "a remove of what is already gone") { try await other.remove("k") }
        // The load lands (recreating the directory).
        try? await disk.backfill(Backfill(value: Data("old".utf8), expiresAt: nil, readStartedAt: readStart), forKey: "k")
        let fresh = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        #expect(try await fresh.getIfPresent("k") == nil, "the load of what the remove ended landed in the shared directory")
    }

    /// The same for a clear: the directory deleted, a clear, then the landing
    /// of a read begun before it.
    @Test func aClearOfADeletedDirectoryStopsALoadInFlight() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = dir.url.appendingPathComponent("cache")
        let disk = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        let other = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        let readStart = ContinuousClock.now
        try FileManager.default.removeItem(at: cache)
        await other.clear()
        try? await disk.backfill(Backfill(value: Data("old".utf8), expiresAt: nil, readStartedAt: readStart), forKey: "k")
        let fresh = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        #expect(try await fresh.getIfPresent("k") == nil, "a value read before the clear landed after it")
    }

    /// The wall clock stepped back by an hour (a machine that booted with its
    /// clock ahead, corrected by NTP) after a clear: the clear's tombstone is
    /// dated an hour ahead, so every back-fill, whenever its read began, would
    /// be declined for the next hour and ten minutes, and neither opening the
    /// directory nor `removeExpired()` deletes it. A tombstone dated further
    /// ahead than it lives stops nothing and is swept.
    @Test func aTombstoneFromBeforeTheClockWasSteppedBackDoesNotStopBackfillsForTheSizeOfTheStep() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let tombstones = DiskTombstones(entries: dir.path)
        #expect(mkdir(dir.path, 0o700) == 0 || errno == EEXIST)
        #expect(mkdir(tombstones.directory, 0o700) == 0)
        var time = (DiskTombstones.wallNow() + 3_600_000_000_000).littleEndian
        try Data(bytes: &time, count: 8).write(to: URL(fileURLWithPath: tombstones.path(nil)))
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        await disk.removeExpired()
        try await disk.backfill(Backfill(value: Data("read now".utf8), expiresAt: nil, readStartedAt: .now), forKey: "k")
        #expect(try await disk.getIfPresent("k") == Data("read now".utf8))
    }

    /// Stress (holds): a back-fill whose read began before another level's
    /// remove of its key started, racing that remove at random points
    /// (before, during and after the remove's tombstone and delete), never
    /// survives both; 300 rounds on one directory.
    @Test func aBackfillRacingAnotherLevelsRemoveNeverSurvivesIt() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let other = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        for round in 0..<300 {
            let key = "k\(round % 7)"
            let readStart = ContinuousClock.now
            async let fill: Void = {
                for _ in 0..<Int.random(in: 0...3) { await Task.yield() }
                try? await disk.backfill(Backfill(value: Data("old".utf8), expiresAt: nil, readStartedAt: readStart), forKey: key)
            }()
            async let removed: Void = {
                for _ in 0..<Int.random(in: 0...3) { await Task.yield() }
                try await other.remove(key)
            }()
            _ = try await (fill, removed)
            let file = disk.file(EntryID(keyBytes: disk.keyBytes(key)))
            #expect(!FileManager.default.fileExists(atPath: file), "round \(round): the back-fill survived the remove")
        }
    }

    /// A cache directory on a read-only filesystem (a warm cache shipped in a
    /// read-only image): a remove of a key that is not there found nothing
    /// to delete, as before the tombstones, and nothing can land there, so no
    /// tombstone is needed: it must not fail for want of one.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aRemoveOfAnAbsentKeyOnAReadOnlyFilesystemSucceeds() async throws {
        try await Self.onTmpfs("strata-readonly-tombstone") { dir in
            let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            try await disk.set(Data("kept".utf8), forKey: "present")
            #expect(mount("tmpfs", dir.path, "tmpfs", UInt(MS_REMOUNT | MS_RDONLY), "size=64k") == 0, "errno \(errno)")
            await #expect(throws: Never.self, "a remove of what is not there") { try await disk.remove("absent") }
            // What is there cannot be deleted: that still fails, naming the
            // entry, which stays on disk and is no longer served here.
            await #expect(throws: DiskCacheError.self) { try await disk.remove("present") }
            #expect(try await disk.getIfPresent("present") == nil)
            #expect(dir.entryFiles().count == 1)
        }
    }

    /// A full disk (a real 64 KiB tmpfs) whose tombstone of the key's bucket
    /// is the empty file an earlier remove on a full disk left: a remove now
    /// cannot write its time there either. It holds: the kernel stamps the
    /// file's modification time before the write fails, so the empty
    /// tombstone reads as this remove's, and the landing of a load whose read
    /// began before it (its own delete freed room) is declined.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aRemoveOnAFullDiskOverAnEmptyTombstoneStillStopsALoadInFlight() async throws {
        try await Self.onTmpfs("strata-full-tombstone") { dir in
            let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            let other = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            try await disk.set(Data(repeating: 1, count: 8000), forKey: "k")
            // The empty tombstone an earlier remove on a full disk left, a minute ago (still young).
            let tombstones = DiskTombstones(entries: dir.path)
            let bucket = tombstones.path(EntryID(keyBytes: other.keyBytes("k")))
            #expect(mkdir(tombstones.directory, 0o700) == 0 || errno == EEXIST)  // the level made it
            #expect(FileManager.default.createFile(atPath: bucket, contents: nil))
            let minuteAgo = timespec(tv_sec: time(nil) - 60, tv_nsec: 0)
            #expect(utimensat(AT_FDCWD, bucket, [minuteAgo, minuteAgo], 0) == 0)
            let readStart = ContinuousClock.now  // the load of the old origin value begins
            // The disk is full again.
            let filler = open(dir.path + "/filler", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
            #expect(filler >= 0)
            let page = [UInt8](repeating: 0, count: 4096)
            while write(filler, page, page.count) > 0 {}
            #expect(errno == ENOSPC)
            close(filler)
            // Another process changed the origin and removes the key: it says nothing went wrong.
            var removeThrew = false
            do { try await other.remove("k") } catch { removeThrew = true }
            var info = stat()
            #expect(stat(bucket, &info) == 0 && info.st_size == 0, "the remove could not write its tombstone (a full disk)")
            // Its delete freed room: the load lands.
            try? await disk.backfill(Backfill(value: Data(repeating: 1, count: 100), expiresAt: nil, readStartedAt: readStart),
                                     forKey: "k")
            let fresh = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            let landed = try await fresh.getIfPresent("k") != nil
            #expect(!(landed && !removeThrew),
                    "the remove succeeded silently, yet a load whose read began before it landed the old value")
        }
    }
}
