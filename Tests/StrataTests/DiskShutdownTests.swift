import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// ``DiskCacheLevel/shutdown()``: a retired level never writes to its
/// directory or creates it again (the explorer deletes its temporary
/// directory right after), and everything asked of it afterwards is answered
/// as documented.
@Suite struct DiskShutdownTests {
    func bytes(_ n: Int, _ fill: UInt8 = 7) -> Data { Data(repeating: fill, count: n) }

    /// What is in `path`: each name with its inode, size and modification
    /// time (a file written or replaced after the snapshot changes one of them).
    static func snapshot(_ path: String) -> [String: [Int]] {
        var result: [String: [Int]] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
            var info = stat()
            guard lstat(path + "/" + name, &info) == 0 else { continue }
            result[name] = [Int(info.st_ino), Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
        }
        return result
    }

    /// The names whose entry differs between two snapshots.
    static func changes(from old: [String: [Int]], to new: [String: [Int]]) -> [String] {
        Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }.sorted()
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    static func isShutDownError(_ error: any Error, _ path: String) -> Bool {
        (error as? DiskCacheError) == .shutDown(path: path)
    }

    @Test func afterShutdownNoOperationRecreatesTheDeletedDirectory() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = dir.url.appendingPathComponent("cache")
        let level = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        for key in ["a", "b", "c"] { try await level.set(bytes(10), forKey: key) }
        _ = try await level.getIfPresent("a")  // an access time to flush
        await level.shutdown()
        #expect(level.isShutDown)
        #expect(level.count == 0 && level.totalSize == 0)
        try FileManager.default.removeItem(at: cache)

        let path = cache.path
        await #expect(throws: DiskCacheError.shutDown(path: path)) { try await level.set(bytes(10), forKey: "d") }
        await #expect(throws: DiskCacheError.shutDown(path: path)) {
            try await level.set(bytes(10), forKey: "d", expiresAt: CacheInstant(Date().addingTimeInterval(60)))
        }
        await #expect(throws: DiskCacheError.shutDown(path: path)) { try await level.set(bytes(2 << 20), forKey: "huge") }
        #expect(try await level.getIfPresent("a") == nil, "a known entry: a miss, not a recovery")
        #expect(try await level.entry(forKey: "zzz") == nil)
        #expect(await level.entries(forKeys: ["a", "b", "x"], maxConcurrency: nil).allSatisfy { $0 == nil })
        await #expect(throws: DiskCacheError.shutDown(path: path)) { try await level.remove("b") }
        await level.clear()
        #expect(await level.removeExpired() == 0)
        await level.trim(toSize: 0)
        await level.onMemoryWarning()
        level.flushAccessTimes()
        level.rebuildIndex()
        await level.shutdown()  // again: nothing more happens

        #expect(!Self.exists(path), "a retired level created its directory again")
        #expect(level.directoryRecreations == 0)
        #expect(level.count == 0 && level.totalSize == 0)
    }

    @Test func aShutDownLevelLeavesItsDirectoryAsItWas() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        for key in ["a", "b"] { try await level.set(bytes(10), forKey: key) }
        _ = try await level.getIfPresent("a")
        await level.shutdown()
        let before = Self.snapshot(dir.path)
        #expect(dir.entryFiles().count == 2, "shutting down deletes nothing")
        _ = try? await level.set(bytes(20), forKey: "a")
        _ = try? await level.remove("b")
        _ = try await level.getIfPresent("a")
        await level.clear()
        await level.trim(toSize: 0)
        let changed = Self.changes(from: before, to: Self.snapshot(dir.path))
        #expect(changed.isEmpty, "a retired level wrote or deleted these: \(changed)")

        // The entries written before are all there for the next level on the directory.
        let next = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        #expect(try await next.getIfPresent("a") == bytes(10))
        #expect(try await next.getIfPresent("b") == bytes(10))
    }

    /// The watch ends with the shutdown: the directory's deletion is reported
    /// to no one and recovers nothing. A second, live level on the directory
    /// hears of the deletion, so the event has been sent by then.
    @Test func theWatchNoticingTheDeletionRecreatesNothing() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = dir.url.appendingPathComponent("cache")
        let level = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        let heard = Atomic<Int>(0)
        let subscription = level.subscribe { _ in heard.add(1, ordering: .relaxed) }
        defer { subscription.cancel() }
        let witness = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        let witnessHeard = Atomic<Int>(0)
        let witnessSubscription = witness.subscribe { _ in witnessHeard.add(1, ordering: .relaxed) }
        defer { witnessSubscription.cancel() }
        try await level.set(bytes(10), forKey: "a")
        _ = try await level.getIfPresent("a")
        #expect(await poll { heard.load(ordering: .relaxed) == 1 }, "the set's own report, delivered in a task of its own")

        await level.shutdown()
        let reported = level.invalidationsReported
        let heardBefore = heard.load(ordering: .relaxed)
        try FileManager.default.removeItem(at: cache)
        #expect(await poll { witnessHeard.load(ordering: .relaxed) > 0 }, "the live level's watch saw the deletion")
        // Listeners are called from a task of their own: give the retired
        // level's a moment it would have had too.
        #expect(!(await poll(timeout: .milliseconds(200)) { heard.load(ordering: .relaxed) > heardBefore }))
        #expect(level.invalidationsReported == reported)
        #expect(!Self.exists(cache.path))
        #expect(level.directoryRecreations == 0)
        let late = level.subscribe { _ in heard.add(1, ordering: .relaxed) }  // watches nothing, logs nothing
        defer { late.cancel() }
        #expect(!Self.exists(cache.path))
        await witness.shutdown()
    }

    /// A composition over a retired level: its reads go past it, and a
    /// back-fill into it fails (logged) without writing anything.
    @Test func aCompositionOverARetiredLevelReadsPastIt() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let cache = dir.url.appendingPathComponent("cache")
        let disk = try DiskCacheLevel<String, Data>(directory: cache, capacity: 1 << 20)
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        let origin = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        try await origin.set(bytes(10), forKey: "k")
        let composed = memory + disk + origin
        await disk.shutdown()
        try FileManager.default.removeItem(at: cache)
        #expect(try await composed.getIfPresent("k") == bytes(10))
        await composed.waitForPendingWrites()
        #expect(!Self.exists(cache.path))
        let error = await #expect(throws: (any Error).self) { try await composed.remove("k") }
        #expect("\(error.map { "\($0)" } ?? "")".contains("disk: remove k failed: the disk level on \(cache.path) is shut down"))
        #expect(!Self.exists(cache.path))
    }

    @Test func concurrentShutdownsAllReturnRetired() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        try await level.set(bytes(10), forKey: "a")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 { group.addTask { await level.shutdown() } }
        }
        #expect(level.isShutDown)
        #expect(try await level.getIfPresent("a") == nil)
    }

    /// Many tasks setting (small entries written inline, large ones on the
    /// IO queue) while the shutdown runs: when it returns, every set that got
    /// in has finished, and nothing is written afterwards.
    @Test func shutdownDuringConcurrentSetsLeavesNothingWrittenAfterItReturns() async throws {
        for round in 0..<5 {
            let dir = TemporaryDirectory(); defer { dir.remove() }
            let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 256 << 20)
            let path = dir.path
            let writers = (0..<16).map { writer in
                Task { () -> [String] in
                    var unexpected: [String] = []
                    for i in 0..<100_000 {
                        let size = i % 7 == 3 ? 70_000 : 100
                        do {
                            try await level.set(Data(repeating: UInt8(truncatingIfNeeded: i), count: size),
                                                forKey: "w\(writer)-\(i % 40)")
                            if i % 5 == 0 { _ = try await level.getIfPresent("w\(writer)-\(i % 13)") }
                            if i % 11 == 0 { try await level.remove("w\(writer)-\((i + 1) % 40)") }
                        } catch {
                            if !Self.isShutDownError(error, path) { unexpected.append("\(error)") }
                            return unexpected
                        }
                    }
                    return unexpected + ["never turned away"]
                }
            }
            #expect(await poll(timeout: .seconds(30)) { level.count >= 100 }, "round \(round)")
            await level.shutdown()
            let after = Self.snapshot(path)
            var problems: [String] = []
            for writer in writers { problems += await writer.value }
            #expect(problems.isEmpty, "round \(round): \(problems.prefix(3))")
            let changed = Self.changes(from: after, to: Self.snapshot(path))
            #expect(changed.isEmpty, "round \(round): written or deleted after shutdown() returned: \(changed.prefix(5))")
            let temporary = after.keys.filter { $0.hasPrefix(".tmp-") }
            #expect(temporary.isEmpty, "round \(round): temporary files left: \(temporary.prefix(5))")
            #expect(after.keys.contains { $0.hasSuffix(".entry") }, "round \(round)")

            dir.remove()
            _ = try? await level.set(bytes(10), forKey: "late")
            _ = try await level.getIfPresent("w0-1")
            #expect(!Self.exists(path), "round \(round)")
        }
    }
}
