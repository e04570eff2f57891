import Foundation
@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// A remove on a disk directory shared by several processes stops the
/// landing of a load or back-fill whose read began before it (the disk
/// level's tombstones, like Redis's): the classic cache-aside race, where
/// one process updates the origin and removes the key while another's load
/// of the old origin value is in flight. Two levels on one directory stand
/// for two processes (they share nothing but the files); one test uses two
/// real processes.
@Suite struct DiskRemoveTombstoneTests {
    /// A loader that waits at a gate before answering.
    final class GatedLoader: Sendable {
        let gate = Gate()
        let calls = Atomic<Int>(0)
        func load(_ key: String) async throws -> Data {
            calls.add(1, ordering: .relaxed)
            try await gate.wait()
            return Data("old".utf8)
        }
    }

    @Test func aLoadThatBeganBeforeAnotherProcessesRemoveDoesNotLand() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let stack = MemoryCacheLevel<String, Data>(capacity: 1 << 20) + disk
        let loader = GatedLoader()
        let get = Task { try await stack.get("k", ttl: .seconds(60), load: loader.load) }
        #expect(await poll { loader.gate.waiting == 1 }, "the load began")
        // Another process changed the origin and removes the key.
        let other = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        try await other.remove("k")
        loader.gate.open()
        #expect(try await get.value == Data("old".utf8), "the get overlapped the remove: its answer stands")
        await stack.waitForPendingWrites()
        let fresh = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        #expect(try await fresh.getIfPresent("k") == nil, "the load of what the remove ended landed in the shared directory")
        #expect(try await other.getIfPresent("k") == nil)
    }

    /// The same with a real second process (`StrataDiskWorker DIR remove KEY`).
    @Test func aRemoveByAnotherProcessStopsALoadInFlight() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        let stack = memory + (try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000))
        let loader = GatedLoader()
        let get = Task { try await stack.get("user:7", ttl: .seconds(60), load: loader.load) }
        #expect(await poll { loader.gate.waiting == 1 }, "the load began")
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent("StrataDiskWorker")
        process.arguments = [dir.path, "remove", "user:7"]
        try process.run()
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { process.waitUntilExit(); continuation.resume() }
        }
        #expect(process.terminationStatus == 0)
        loader.gate.open()
        _ = try await get.value
        await stack.waitForPendingWrites()
        let fresh = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        #expect(try await fresh.getIfPresent("user:7") == nil, "the removed value landed for every process")
        // The next get loads again, and that load lands.
        #expect(await poll { memory.value(forKey: "user:7") == nil })
        #expect(try await stack.get("user:7", ttl: .seconds(60), load: { _ in Data("new".utf8) }) == Data("new".utf8))
        await stack.waitForPendingWrites()
        #expect(try await fresh.getIfPresent("user:7") == Data("new".utf8))
    }

    @Test func aBackfillWhoseReadBeganBeforeAClearDoesNotLand() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let readStart = ContinuousClock.now
        let other = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        await other.clear()
        await #expect(throws: BackfillDeclined.self) {
            try await disk.backfill(Backfill(value: Data("old".utf8), expiresAt: nil, readStartedAt: readStart), forKey: "k")
        }
        #expect(try await other.getIfPresent("k") == nil)
    }

    @Test func aReadThatBeganAfterTheRemoveLands() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let other = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        try await other.remove("k")
        await other.clear()
        try await disk.backfill(Backfill(value: Data("new".utf8), expiresAt: nil, readStartedAt: .now), forKey: "k")
        #expect(try await other.getIfPresent("k") == Data("new".utf8))
        // A back-fill that does not say when its read began is declined while a tombstone is young.
        try await other.remove("j")
        await #expect(throws: BackfillDeclined.self) {
            try await disk.backfill(Backfill(value: Data("x".utf8), expiresAt: nil), forKey: "j")
        }
        // A set is a newer write: it lands whatever the tombstones say.
        try await disk.set(Data("set".utf8), forKey: "j")
        #expect(try await other.getIfPresent("j") == Data("set".utf8))
    }

    /// Tombstones share buckets: however many keys are removed, the
    /// directory holds at most 4,097 of them; those too old to stop a
    /// back-fill are deleted when a level opens the directory.
    @Test func tombstonesAreBoundedAndSwept() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        // Off the pool: a disk level's remove is blocking file I/O that never
        // suspends, so 6,000 of them held a pool thread for ~30 s of a full run.
        try await offThePool { for i in 0..<6_000 { try await disk.remove("k\(i)") } }
        let tombstones = dir.url.appendingPathComponent(DiskTombstones.directoryName).path
        let names = try FileManager.default.contentsOfDirectory(atPath: tombstones)
        #expect(names.count <= 4_097 && names.count > 3_000, "\(names.count) tombstones")
        // One made long ago, as another process would have left it.
        let old = tombstones + "/" + DiskTombstones.allName
        var time = (DiskTombstones.wallNow() - 3_600_000_000_000).littleEndian
        try Data(bytes: &time, count: 8).write(to: URL(fileURLWithPath: old))
        _ = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        #expect(!FileManager.default.fileExists(atPath: old), "an hour-old tombstone was kept")
        let young = names.filter { $0 != DiskTombstones.allName }.count  // the level's own, made with the directory, was the old one
        #expect(try FileManager.default.contentsOfDirectory(atPath: tombstones).count == young, "young ones stay")
    }
}
