import Foundation
import Strata
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A key-value store on a full disk, a read-only disk, and a directory
/// deleted under it: a failed set throws, never leaves the value it replaced
/// readable, and never costs another entry.
@Suite(.serialized) struct KeyValueStoreFailureTests {
    func bytes(_ n: Int, _ fill: UInt8 = 7) -> Data { Data(repeating: fill, count: n) }

    /// Mounts a tmpfs of `size` at `dir`; `false` (the caller skips) where
    /// mounting is not permitted.
    func mountTmpfs(_ dir: TemporaryDirectory, size: String = "64k") -> Bool {
        if mount("tmpfs", dir.path, "tmpfs", 0, "size=\(size)") == 0 { return true }
        print("skipped: cannot mount a tmpfs at \(dir.path) (errno \(errno)); needs root")
        return false
    }

    /// Fills the filesystem of `dir` with a file of its own, leaving about `free` bytes.
    func fill(_ dir: TemporaryDirectory, leaving free: Int) throws {
        var info = statvfs()
        guard statvfs(dir.path, &info) == 0 else { throw POSIXError(.EIO) }
        let available = Int(info.f_bavail) * Int(info.f_frsize)
        let filler = available - free
        if filler > 0 { _ = FileManager.default.createFile(atPath: dir.path + "/filler", contents: bytes(filler, 0)) }
    }

    @Test func aSetFailedOnAFullDiskLeavesNoOlderValueAndKeepsTheOthers() async throws {
        let dir = TemporaryDirectory("strata-kv-full"); defer { dir.remove() }
        guard mountTmpfs(dir) else { return }
        defer { umount(dir.path) }
        let level = try KeyValueStoreLevel<String, Data>(name: "d", directory: dir.url)
        try await level.set(bytes(8000, 1), forKey: "a")
        try await level.set(bytes(8000, 2), forKey: "b")
        try fill(dir, leaving: 24 << 10)
        // The new file (about 38 KB) does not fit beside the old one.
        await #expect(throws: DiskCacheError.writeFailed(path: dir.path + "/d.plist", errno: ENOSPC)) {
            try await level.set(self.bytes(30000, 3), forKey: "a")
        }
        #expect(try await level.getIfPresent("a") == nil, "the value the failed set replaced is gone")
        #expect(try await level.getIfPresent("b") == bytes(8000, 2))
        let reopened = try KeyValueStoreLevel<String, Data>(name: "d", directory: dir.url)
        #expect(try await reopened.getIfPresent("a") == nil)
        #expect(try await reopened.getIfPresent("b") == bytes(8000, 2))
        #expect(!dir.files().contains { $0.hasPrefix(".tmp") }, "no temporary file is left")
    }

    @Test func aDeletedDirectoryIsRecreatedByTheNextWrite() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let store = dir.url.appendingPathComponent("kv")
        let level = try KeyValueStoreLevel<String, String>(name: "prefs", directory: store)
        try await level.set("dark", forKey: "theme")
        try FileManager.default.removeItem(at: store)
        #expect(try await level.getIfPresent("theme") == nil)
        try await level.set("en", forKey: "language")
        #expect(try await level.get("language") == "en")
        let reopened = try KeyValueStoreLevel<String, String>(name: "prefs", directory: store)
        #expect(try await reopened.get("language") == "en")
        var info = stat()
        #expect(stat(store.path, &info) == 0 && info.st_mode & 0o777 == 0o700, "recreated private")
    }
}
