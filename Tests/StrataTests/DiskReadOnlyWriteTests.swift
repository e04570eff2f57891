import Foundation
@testable import Strata
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A cache directory whose filesystem turns read-only while the level runs
/// (ext4 remounts itself read-only after an I/O error): a write that could
/// delete nothing must still leave no value from before it to serve.
@Suite struct DiskReadOnlyWriteTests {
    /// The tmpfs of ``DiskTombstoneReviewTests/onTmpfs(_:_:)``, remounted read-only or writable.
    static func remount(_ dir: TemporaryDirectory, readOnly: Bool) {
        let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
        #expect(mount("tmpfs", dir.path, "tmpfs", flags, "size=64k") == 0, "remount: errno \(errno)")
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aClearThatCouldDeleteNothingServesNothingFromBeforeIt() async throws {
        try await DiskTombstoneReviewTests.onTmpfs("strata-readonly-clear") { dir in
            let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
            let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            let cache = memory + disk
            try await cache.set(Data("old".utf8), forKey: "k")
            Self.remount(dir, readOnly: true)
            await cache.clear()
            #expect(try await cache.getIfPresent("k") == nil, "the clear returned and the value from before it is served")
            #expect(try await disk.getIfPresent("k") == nil)
            Self.remount(dir, readOnly: false)
            try await cache.set(Data("new".utf8), forKey: "k")
            #expect(try await disk.getIfPresent("k") == Data("new".utf8), "a set after the clear is served")
        }
    }
}
