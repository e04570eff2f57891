import Foundation
@testable import Strata
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A cache directory whose filesystem turns read-only while the level runs
/// (ext4 remounts itself read-only after an I/O error): a write that could
/// delete nothing must still leave no value from before it to serve, in
/// this level and in a stack over it.
@Suite struct DiskReadOnlyWriteTests {
    /// The tmpfs of ``DiskTombstoneReviewTests/onTmpfs(_:size:_:)``, remounted read-only or writable.
    static func remount(_ dir: TemporaryDirectory, readOnly: Bool, size: String = "64k") {
        let flags = UInt(MS_REMOUNT) | (readOnly ? UInt(MS_RDONLY) : 0)
        #expect(mount("tmpfs", dir.path, "tmpfs", flags, "size=\(size)") == 0, "remount: errno \(errno)")
    }

    typealias Stack = ComposedCache<MemoryCacheLevel<String, Data>, DiskCacheLevel<String, Data>>

    /// Memory over a disk level on a tmpfs, "old" set for "k" through the
    /// stack, then the tmpfs remounted read-only.
    static func onAReadOnlyStack(
        _ name: String,
        _ body: (TemporaryDirectory, MemoryCacheLevel<String, Data>, DiskCacheLevel<String, Data>, Stack) async throws -> Void
    ) async throws {
        try await DiskTombstoneReviewTests.onTmpfs(name) { dir in
            let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
            let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            let cache = memory + disk
            try await cache.set(Data("old".utf8), forKey: "k")
            remount(dir, readOnly: true)
            try await body(dir, memory, disk, cache)
        }
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aClearThatCouldDeleteNothingServesNothingFromBeforeIt() async throws {
        try await Self.onAReadOnlyStack("strata-readonly-clear") { dir, _, disk, cache in
            await cache.clear()
            #expect(try await cache.getIfPresent("k") == nil, "the clear returned and the value from before it is served")
            #expect(try await disk.getIfPresent("k") == nil)
            Self.remount(dir, readOnly: false)
            try await cache.set(Data("new".utf8), forKey: "k")
            #expect(try await disk.getIfPresent("k") == Data("new".utf8), "a set after the clear is served")
        }
    }

    /// Whether `error` is a ``DiskCacheError/writeFailed(path:errno:)`` for `code`.
    static func isWriteFailed(_ error: (any Error)?, _ code: Int32) -> Bool {
        if case .writeFailed(_, let failed)? = error as? DiskCacheError { return failed == code }
        return false
    }

    /// A set or a remove that cannot reach the disk throws, and the older
    /// entry stays on disk (nothing can delete it): this level must never
    /// answer it again, as after a failed set that could delete it. Entries
    /// no write touched are served as before; a level opened on the
    /// directory later has no word of it (nothing could be written to say
    /// so); a set that reaches the disk again is served.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aSetOrRemoveThatCouldNotReachTheDiskNeverAnswersTheOlderEntry() async throws {
        try await DiskTombstoneReviewTests.onTmpfs("strata-readonly-set") { dir in
            let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            for key in ["set", "removed", "other"] { try await disk.set(Data("old".utf8), forKey: key) }
            Self.remount(dir, readOnly: true)
            let set = await #expect(throws: DiskCacheError.self) { try await disk.set(Data("new".utf8), forKey: "set") }
            #expect(Self.isWriteFailed(set, EROFS), "\(String(describing: set))")
            #expect(try await disk.getIfPresent("set") == nil, "the set threw and the value it would replace is served")
            let remove = await #expect(throws: DiskCacheError.self) { try await disk.remove("removed") }
            #expect(Self.isWriteFailed(remove, EROFS), "\(String(describing: remove))")
            #expect(try await disk.getIfPresent("removed") == nil, "the remove threw and the value it would end is served")
            #expect(try await disk.entry(forKey: "set") == nil)
            #expect(try await disk.getIfPresent("other") == Data("old".utf8), "an entry no write touched")
            #expect(dir.entryFiles().count == 3, "nothing could be deleted")
            Self.remount(dir, readOnly: false)
            #expect(try await disk.getIfPresent("set") == nil, "still not, with the filesystem writable again")
            let later = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            #expect(try await later.getIfPresent("set") == Data("old".utf8), "another level (process) reads what is on disk")
            try await disk.set(Data("newer".utf8), forKey: "set")
            #expect(try await disk.getIfPresent("set") == Data("newer".utf8), "a set that reached the disk is served")
        }
    }

    /// Memory over the disk: a set through the stack stores in memory, fails
    /// on disk (read-only) and throws. Afterwards memory holds neither value,
    /// a get answers nothing (the disk's older entry is not served, nor
    /// back-filled into memory), and a loading get asks the origin.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func aStackWhoseDiskSetFailedServesAndBackFillsNoOlderValue() async throws {
        try await Self.onAReadOnlyStack("strata-readonly-stack") { _, memory, disk, cache in
            let error = await #expect(throws: LevelsFailedError.self) { try await cache.set(Data("new".utf8), forKey: "k") }
            #expect(error?.failingLevels == [disk.name], "\(String(describing: error))")
            #expect(Self.isWriteFailed(error?.failures.first?.cause(as: DiskCacheError.self), EROFS))
            #expect(await poll { memory.value(forKey: "k") == nil }, "memory still holds a value: \(String(describing: memory.value(forKey: "k")))")
            let read = try await cache.getIfPresent("k")
            #expect(read == nil, "the get answered the value the failed set would replace")
            await cache.waitForPendingWrites()
            #expect(memory.value(forKey: "k") == nil, "the get back-filled the disk's older entry into memory")
            let loaded = try await cache.get("k", ttl: .seconds(60)) { _ in Data("origin".utf8) }
            #expect(loaded == Data("origin".utf8))
            let again = try await cache.getIfPresent("k")
            #expect(again == Data("origin".utf8), "the origin's value, from memory")
        }
    }

    /// The keys voided one by one are bounded: one past
    /// ``DiskCacheLevel/voidedKeyLimit`` makes every entry from before it a
    /// miss in the level (as a clear that could delete nothing does), never
    /// one of the voided entries served again. On a tmpfs of its own, large
    /// enough for that many entries.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func pastTheLimitOfVoidedKeysEveryOlderEntryIsAMiss() async throws {
        try await DiskTombstoneReviewTests.onTmpfs("strata-readonly-limit", size: "64m") { dir in
            let limit = DiskCacheLevel<String, Data>.voidedKeyLimit
            let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 64 << 20)
            for index in 0...limit { try await disk.set(Data("old".utf8), forKey: "k\(index)") }
            try await disk.set(Data("untouched".utf8), forKey: "untouched")
            Self.remount(dir, readOnly: true, size: "64m")
            for index in 0..<limit {
                await #expect(throws: DiskCacheError.self) { try await disk.set(Data("new".utf8), forKey: "k\(index)") }
            }
            #expect(try await disk.getIfPresent("k0") == nil)
            #expect(try await disk.getIfPresent("untouched") == Data("untouched".utf8), "at the limit, only the voided keys miss")
            await #expect(throws: DiskCacheError.self) { try await disk.set(Data("new".utf8), forKey: "k\(limit)") }
            for key in ["k0", "k\(limit / 2)", "k\(limit)"] {
                #expect(try await disk.getIfPresent(key) == nil, "\(key): a voided key's entry is served past the limit")
            }
            #expect(try await disk.getIfPresent("untouched") == nil, "past the limit, every older entry misses")
            Self.remount(dir, readOnly: false, size: "64m")
            try await disk.set(Data("newer".utf8), forKey: "k0")
            #expect(try await disk.getIfPresent("k0") == Data("newer".utf8), "a set that reached the disk is served")
        }
    }

    /// Failed sets racing reads of their keys and of untouched keys: once a
    /// set has thrown, no read begun after it answers the older entry, and
    /// the untouched entries are served throughout.
    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root"))
    func failedSetsRacingReadsNeverServeTheOlderEntryOnceThrown() async throws {
        try await DiskTombstoneReviewTests.onTmpfs("strata-readonly-race") { dir in
            let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            let written = (0..<6).map { "w\($0)" }, untouched = (0..<3).map { "u\($0)" }
            for key in written + untouched { try await disk.set(Data(key.utf8), forKey: key) }
            Self.remount(dir, readOnly: true)
            let failures = await withTaskGroup(of: [String].self) { group in
                for key in written {
                    group.addTask {
                        do {
                            try await disk.set(Data("new".utf8), forKey: key)
                            return ["\(key): the set succeeded on a read-only filesystem"]
                        } catch {}
                        for _ in 0..<50 where (try? await disk.getIfPresent(key)) != nil {
                            return ["\(key): read the older entry after the set threw"]
                        }
                        return []
                    }
                }
                for key in untouched {
                    group.addTask {
                        for _ in 0..<200 where (try? await disk.getIfPresent(key)) != Data(key.utf8) {
                            return ["\(key): an untouched entry was not served"]
                        }
                        return []
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
            #expect(failures.isEmpty, "\(failures)")
        }
    }
}
