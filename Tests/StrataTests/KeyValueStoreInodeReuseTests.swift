import Foundation
import Strata
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A level knows its soft copy is current by the domain file's identity
/// (device, inode, size, modification time). ext4 hands a freed inode to the
/// next file at once, and kernels before 6.13 stamp files from a coarse
/// clock: two quick rewrites of the same size can leave a file that looks
/// like the version a level read. The level keeps that version open, so its
/// inode cannot be handed on while the copy is in use.
@Suite struct KeyValueStoreInodeReuseTests {
    @Test func aFileReplacedTwiceWithTheSameSizeAndTimeIsStillSeenAsChanged() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let reader = try KeyValueStoreLevel<String, String>(name: "domain", directory: dir.url, codec: .string)
        let writer = try KeyValueStoreLevel<String, String>(name: "domain", directory: dir.url, codec: .string)
        let path = dir.url.appendingPathComponent("domain.plist").path
        try await writer.set("v1", forKey: "k")
        #expect(try await reader.get("k") == "v1")  // the reader's copy: version 1
        var first = stat()
        #expect(stat(path, &first) == 0)
        try await writer.set("v2", forKey: "k")
        try await writer.set("v3", forKey: "k")
        // A coarse clock: version 3 gets version 1's modification time.
        var times = [first.st_atim, first.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        #expect(try await reader.get("k") == "v3", "the reader served the version it had read")
    }
}
