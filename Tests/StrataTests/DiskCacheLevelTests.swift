import Foundation
import Strata
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct DiskCacheLevelTests {
    struct Profile: Codable, Equatable, Sendable { var name: String; var age: Int }
    struct Other: Codable, Equatable, Sendable { var flag: Bool }

    func bytes(_ n: Int, _ fill: UInt8 = 7) -> Data { Data(repeating: fill, count: n) }

    @Test func roundTripsDataStringAndCodable() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let data = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        try await data.set(bytes(4096), forKey: "blob")
        #expect(try await data.get("blob") == bytes(4096))
        let text = try DiskCacheLevel<URL, String>(directory: dir.url, capacity: 1 << 20)
        let url = URL(string: "https://example.invalid/a?b=c")!
        try await text.set("héllo", forKey: url)
        #expect(try await text.get(url) == "héllo")
        let profiles = try DiskCacheLevel<String, Profile>(directory: dir.url, capacity: 1 << 20)
        try await profiles.set(Profile(name: "Ada", age: 36), forKey: "ada")
        #expect(try await profiles.get("ada") == Profile(name: "Ada", age: 36))
        await #expect(throws: FetchError.valueNotInCache) { try await profiles.get("nobody") }
        #expect(dir.entryFiles().count == 3)
    }

    @Test func persistsAcrossInstancesWithLRUOrder() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        do {
            let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, policy: .lru)
            for key in ["a", "b", "c"] { try await level.set(bytes(100), forKey: key) }
            _ = try await level.get("a")
            level.flushAccessTimes()
        }
        let entrySize = 56 + 5 + 1 + 100  // header + "data\0" + key + value
        let reopened = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, policy: .lru)
        #expect(reopened.count == 3)
        #expect(reopened.totalSize == 3 * entrySize)
        await reopened.trim(toSize: 2 * entrySize)
        #expect(try await reopened.getIfPresent("b") == nil, "b was least recently used")
        #expect(try await reopened.getIfPresent("a") != nil)
        #expect(try await reopened.getIfPresent("c") != nil)
    }

    @Test func capacityEvictionFollowsReads() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let entrySize = 56 + 5 + 1 + 1000
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 3 * entrySize, policy: .lru)
        for key in ["a", "b", "c"] { try await level.set(bytes(1000), forKey: key) }
        #expect(level.totalSize == 3 * entrySize, "capacity is inclusive")
        _ = try await level.get("a")
        try await level.set(bytes(1000), forKey: "d")
        #expect(try await level.getIfPresent("b") == nil)
        #expect(try await level.getIfPresent("a") != nil)
        #expect(level.count == 3 && level.evictions == 1)
        #expect(dir.entryFiles().count == 3)
    }

    @Test func corruptTruncatedAndForeignFilesReadAsMissesAndAreDeleted() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        for key in ["flip", "cut", "foreign", "fine"] { try await level.set(bytes(300), forKey: key) }
        func file(of key: String) -> String {
            let before = Set(dir.entryFiles())
            return before.first { name in
                let data = FileManager.default.contents(atPath: dir.path + "/" + name)!
                return data.range(of: Data(("data\0" + key).utf8)) != nil
            }!
        }
        let flip = dir.path + "/" + file(of: "flip")
        var content = FileManager.default.contents(atPath: flip)!
        content[content.count - 10] ^= 0xFF
        _ = FileManager.default.createFile(atPath: flip, contents: content)
        let cut = dir.path + "/" + file(of: "cut")
        let truncated = FileManager.default.contents(atPath: cut)!.prefix(100)
        _ = FileManager.default.createFile(atPath: cut, contents: Data(truncated))
        let foreign = dir.path + "/" + file(of: "foreign")
        _ = FileManager.default.createFile(atPath: foreign, contents: Data("<html>not a cache entry</html>".utf8))

        #expect(try await level.getIfPresent("flip") == nil)
        #expect(try await level.getIfPresent("cut") == nil)
        #expect(try await level.getIfPresent("foreign") == nil)
        #expect(try await level.get("fine") == bytes(300))
        #expect(level.corruptEntriesRemoved == 3)
        #expect(dir.entryFiles().count == 1)
        #expect(level.count == 1)
    }

    @Test func startupCleansUpWhatAKillLeavesBehind() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        do {
            let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
            try await level.set(bytes(500), forKey: "kept")
            try await level.set(bytes(500), forKey: "half-written")
        }
        // A killed writer: a temporary file of a dead process, a truncated entry.
        let half = dir.entryFiles().first { name in
            FileManager.default.contents(atPath: dir.path + "/" + name)!.range(of: Data("half-written".utf8)) != nil
        }!
        let full = FileManager.default.contents(atPath: dir.path + "/" + half)!
        _ = FileManager.default.createFile(atPath: dir.path + "/" + half, contents: full.prefix(full.count / 2))
        _ = FileManager.default.createFile(atPath: dir.path + "/.tmp-999999-abc", contents: full)
        let live = ".tmp-\(getpid())-inprogress"
        _ = FileManager.default.createFile(atPath: dir.path + "/" + live, contents: Data("x".utf8))
        // Garbage where an index or lock might be, and a stranger's file.
        _ = FileManager.default.createFile(atPath: dir.path + "/.lock", contents: Data(repeating: 0xAB, count: 77))
        _ = FileManager.default.createFile(atPath: dir.path + "/index", contents: Data("garbage".utf8))
        _ = FileManager.default.createFile(atPath: dir.path + "/README.txt", contents: Data("mine".utf8))

        let reopened = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        #expect(reopened.count == 1)
        #expect(reopened.corruptEntriesRemoved == 1)
        #expect(try await reopened.get("kept") == bytes(500))
        #expect(try await reopened.getIfPresent("half-written") == nil)
        let files = Set(dir.files())
        #expect(!files.contains(".tmp-999999-abc"), "a dead writer's leftover is removed")
        #expect(files.contains(live), "a live writer's file in progress is left alone")
        #expect(files.isSuperset(of: ["README.txt", "index", ".lock"]))
    }

    @Test func unwritableDirectoryIsATypedError() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let blocker = dir.url.appendingPathComponent("a-file")
        _ = FileManager.default.createFile(atPath: blocker.path, contents: Data())
        #expect(throws: DiskCacheError.directoryNotWritable(path: blocker.appendingPathComponent("cache").path, errno: ENOTDIR)) {
            try DiskCacheLevel<String, Data>(directory: blocker.appendingPathComponent("cache"), capacity: 100)
        }
    }

    @Test func fullDiskFailsTheSetAndKeepsEarlierEntries() async throws {
        let dir = TemporaryDirectory("strata-full"); defer { dir.remove() }
        // A real, tiny filesystem: tmpfs of 64 KiB (the tests run as root, as CI does).
        guard mount("tmpfs", dir.path, "tmpfs", 0, "size=64k") == 0 else {
            Issue.record("cannot mount a tmpfs at \(dir.path) (errno \(errno)): this test needs root")
            return
        }
        defer { umount(dir.path) }
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 10 << 20)
        var stored: [String] = []
        var failure: (any Error)?
        for i in 0..<100 {
            do {
                try await level.set(bytes(8000, UInt8(i)), forKey: "k\(i)")
                stored.append("k\(i)")
            } catch {
                failure = error
                break
            }
        }
        guard case .writeFailed(_, let code)? = failure as? DiskCacheError else {
            Issue.record("expected writeFailed, got \(String(describing: failure))")
            return
        }
        #expect(code == ENOSPC)
        #expect(!stored.isEmpty)
        for (i, key) in stored.enumerated() { #expect(try await level.get(key) == bytes(8000, UInt8(i))) }
        #expect(!dir.files().contains { $0.hasPrefix(".tmp-") }, "the failed write's temporary file is gone")
        // Overwriting an existing key on a full disk fails and drops the old
        // value (a failed set never leaves the value it replaced readable);
        // every other entry is kept.
        await #expect(throws: DiskCacheError.self) { try await level.set(bytes(30000), forKey: stored[0]) }
        #expect(try await level.getIfPresent(stored[0]) == nil)
        for (i, key) in stored.enumerated().dropFirst() { #expect(try await level.get(key) == bytes(8000, UInt8(i))) }
    }

    @Test func valueLargerThanCapacityIsRejected() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1000)
        await #expect(throws: DiskCacheError.valueTooLarge(size: 56 + 5 + 1 + 2000, capacity: 1000)) {
            try await level.set(bytes(2000), forKey: "k")
        }
        #expect(dir.entryFiles().isEmpty)
    }

    @Test func hostileKeysStaySafelyInsideTheDirectory() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
        let keys = ["../../etc/passwd", "a/b/c", "..", "", String(repeating: "k", count: 10_000),
                    "\u{0}\u{1}binary\u{7F}", "日本語", "with space"]
        for (i, key) in keys.enumerated() { try await level.set("v\(i)", forKey: key) }
        for (i, key) in keys.enumerated() { #expect(try await level.get(key) == "v\(i)") }
        #expect(dir.entryFiles().count == keys.count)
        #expect(dir.files().allSatisfy { !$0.contains("/") })
        let binary = try DiskCacheLevel<Data, String>(directory: dir.url, capacity: 1 << 20)
        try await binary.set("bytes", forKey: Data([0xFF, 0xFE, 0x00, 0x2F]))
        #expect(try await binary.get(Data([0xFF, 0xFE, 0x00, 0x2F])) == "bytes")
    }

    @Test func filesDeletedBehindItsBackAreMissesAndSizesStaySane() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        for i in 0..<10 { try await level.set(bytes(100), forKey: "k\(i)") }
        for name in dir.entryFiles() { try FileManager.default.removeItem(atPath: dir.path + "/" + name) }
        for i in 0..<10 { #expect(try await level.getIfPresent("k\(i)") == nil) }
        #expect(level.count == 0 && level.totalSize == 0)
        try await level.remove("k1")
        await level.trim(toSize: 0)
        #expect(level.totalSize == 0)
        try await level.set(bytes(10), forKey: "again")
        #expect(level.totalSize == 56 + 5 + 5 + 10)
    }

    @Test func expiryWithATestClock() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()
        let level = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20, defaultTTL: .seconds(60), clock: clock)
        try await level.set("a", forKey: "a")
        try await level.set("b", forKey: "b", ttl: .seconds(5))
        let short = level.expires(at: .seconds(1))
        try await short.set("c", forKey: "c")
        clock.advance(by: .seconds(1))
        #expect(try await level.getIfPresent("c") == nil)
        #expect(await level.removeExpired() == 0, "c was deleted when read")
        clock.advance(by: .seconds(4))
        #expect(await level.removeExpired() == 1)
        #expect(try await level.get("a") == "a")
        #expect(dir.entryFiles().count == 1)
        // Expiry is stored with the entry: a new instance honours it.
        clock.advance(by: .seconds(55))
        let reopened = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20, clock: clock)
        #expect(reopened.count == 0)
    }

    @Test func differentValueTypesOnOneDirectoryLeaveEachOtherAlone() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let strings = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
        let blobs = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        try await strings.set("text", forKey: "k")
        try await blobs.set(bytes(3), forKey: "k")
        #expect(try await strings.get("k") == "text")
        #expect(try await blobs.get("k") == bytes(3))
        // Same codec name, different type: a decode failure is a miss, counted,
        // and the entry stays for its writer.
        let profiles = try DiskCacheLevel<String, Profile>(directory: dir.url, capacity: 1 << 20)
        let others = try DiskCacheLevel<String, Other>(directory: dir.url, capacity: 1 << 20)
        try await profiles.set(Profile(name: "x", age: 1), forKey: "p")
        #expect(try await others.getIfPresent("p") == nil)
        #expect(others.decodeFailures == 1)
        #expect(try await profiles.get("p") == Profile(name: "x", age: 1))
    }

    @Test func concurrentUseInOneProcessStaysConsistent() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try DiskCacheLevel<Int, Data>(directory: dir.url, capacity: 200_000)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<6 {
                group.addTask {
                    for i in 0..<300 {
                        let key = (i * 13 + worker) % 150
                        switch i % 4 {
                        case 0, 1: try? await level.set(Data(repeating: UInt8(key % 256), count: 500 + key), forKey: key)
                        case 2: _ = try? await level.remove(key)
                        default:
                            if let value = try? await level.getIfPresent(key) {
                                #expect(value == Data(repeating: UInt8(key % 256), count: 500 + key))
                            }
                        }
                    }
                }
            }
        }
        #expect(level.totalSize <= 200_000)
        let onDisk = dir.entryFiles().reduce(0) { sum, name in
            sum + ((try? FileManager.default.attributesOfItem(atPath: dir.path + "/" + name)[.size] as? Int) ?? 0)
        }
        #expect(onDisk == level.totalSize)
        #expect(dir.entryFiles().count == level.count)
        #expect(level.corruptEntriesRemoved == 0)
    }

    @Test func twoProcessesWritingOneDirectory() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let worker = productsDirectory.appendingPathComponent("StrataDiskWorker")
        #expect(FileManager.default.isExecutableFile(atPath: worker.path), "built by swift build: \(worker.path)")
        let processes = try (0..<2).map { id -> Process in
            let process = Process()
            process.executableURL = worker
            process.arguments = [dir.path, "\(id)", "600"]
            try process.run()
            return process
        }
        for process in processes {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async { process.waitUntilExit(); continuation.resume() }
            }
        }
        #expect(processes.map(\.terminationStatus) == [0, 0])
        // Everything left is readable and right.
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        #expect(level.corruptEntriesRemoved == 0)
        #expect(!dir.files().contains { $0.hasPrefix(".tmp-") })
        var checked = 0
        for key in (0..<64).map({ "shared-\($0)" }) + (0..<2).flatMap({ w in (0..<97).map { "worker\(w)-\($0)" } }) {
            if let value = try await level.getIfPresent(key) {
                #expect(value == Data(String(repeating: key + ";", count: 1 + key.count % 40).utf8))
                checked += 1
            }
        }
        #expect(checked > 100)
    }
}
