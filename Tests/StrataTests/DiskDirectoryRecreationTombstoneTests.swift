import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A deleted cache directory takes its tombstones with it (a tmp reaper, a
/// user cleaning `~/.cache`). A back-fill whose read began before another
/// process's remove must still not land once the directory is gone, or made
/// again (by a level, by another process, by `mkdir`): what was removed
/// before is unknown there, so it is declined, and the removed value never
/// comes back for every process on the directory. Each remove here is made
/// by a real second process (`StrataDiskWorker DIR remove KEY`).
@Suite struct DiskDirectoryRecreationTombstoneTests {
    static let old = Data("old".utf8)

    /// Runs `StrataDiskWorker DIR ARGS…` to its end; `true` when it succeeded.
    static func worker(_ dir: TemporaryDirectory, _ arguments: String...) async throws -> Bool {
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent("StrataDiskWorker")
        process.arguments = [dir.path] + arguments
        try process.run()
        return await process.exit() && process.terminationStatus == 0
    }

    /// A level's back-fill of `old`, read from a read begun at `readStart`.
    static func backfill(_ disk: DiskCacheLevel<String, Data>, _ key: String, readStart: ContinuousClock.Instant) async throws {
        try await disk.backfill(Backfill(value: old, expiresAt: nil, readStartedAt: readStart), forKey: key)
    }

    @Test func aBackfillIsDeclinedInADirectoryDeletedSinceAnotherProcessesRemove() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        let readStart = ContinuousClock.now
        #expect(try await Self.worker(dir, "remove", "k"), "another process removes k (the origin changed)")
        try FileManager.default.removeItem(at: dir.url)
        await #expect(throws: BackfillDeclined.self, "the removed value landed in the directory made again") {
            try await Self.backfill(disk, "k", readStart: readStart)
        }
        let fresh = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        #expect(try await fresh.getIfPresent("k") == nil, "the removed value is read by every process")
        // A read that begins now lands (the directory's history is known from here on).
        try await Self.backfill(disk, "k", readStart: .now)
        #expect(try await fresh.getIfPresent("k") == Self.old)
    }

    @Test func aBackfillIsDeclinedInADirectoryAnotherProcessMadeAgain() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        let readStart = ContinuousClock.now
        #expect(try await Self.worker(dir, "remove", "k"))
        try FileManager.default.removeItem(at: dir.url)
        // Another process's write makes the directory again before the landing.
        #expect(try await Self.worker(dir, "set", "other", "x"))
        await #expect(throws: BackfillDeclined.self, "the removed value landed in the directory made again") {
            try await Self.backfill(disk, "k", readStart: readStart)
        }
        let fresh = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        #expect(try await fresh.getIfPresent("k") == nil, "the removed value is read by every process")
        #expect(try await fresh.getIfPresent("other") == Data("x".utf8))
    }

    @Test func aBackfillIsDeclinedInADirectoryMadeAgainByAnotherProgram() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        let readStart = ContinuousClock.now
        #expect(try await Self.worker(dir, "remove", "k"))
        try FileManager.default.removeItem(at: dir.url)
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)  // `mkdir`
        await #expect(throws: BackfillDeclined.self, "the removed value landed in the directory made again") {
            try await Self.backfill(disk, "k", readStart: readStart)
        }
        #expect(try await Self.worker(dir, "remove", "unrelated"))
        let fresh = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        #expect(try await fresh.getIfPresent("k") == nil, "the removed value is read by every process")
    }

    /// End to end: `memory + disk` loads `k` (the origin's old value) while
    /// another process changes the origin and removes `k`, and the
    /// directory is deleted before the load's landing reaches the disk (held
    /// at a gate here: a landing that is slow to run, on a loaded machine).
    @Test func aLoadInFlightAcrossARemoveAndADeletedDirectoryLeavesNothingForOthers() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        let held = HeldBackfills(disk)
        let stack = MemoryCacheLevel<String, Data>(capacity: 1 << 20) + held
        let get = Task { try await stack.get("k", ttl: .seconds(60)) { _ in Self.old } }
        #expect(await poll { held.gate.waiting == 1 }, "the load's landing reached the disk")
        #expect(try await Self.worker(dir, "remove", "k"), "another process removes k (the origin changed)")
        try FileManager.default.removeItem(at: dir.url)
        held.gate.open()
        #expect(try await get.value == Self.old, "the get overlapped the remove: its answer stands")
        await stack.waitForPendingWrites()
        let fresh = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        #expect(try await fresh.getIfPresent("k") == nil, "the removed value is read by every process")
    }
}

/// The disk level, its back-fills (and loads' landings) waiting at `gate`.
private struct HeldBackfills: WrapperLevel {
    let inner: DiskCacheLevel<String, Data>
    let gate = Gate()
    init(_ inner: DiskCacheLevel<String, Data>) { self.inner = inner }

    func getIfPresent(_ key: String) async throws -> Data? { try await inner.getIfPresent(key) }
    func entry(forKey key: String) async throws -> CacheEntry<Data>? { try await inner.entry(forKey: key) }
    func set(_ value: Data, forKey key: String) async throws { try await inner.set(value, forKey: key) }
    func set(_ value: Data, forKey key: String, expiresAt: CacheInstant?) async throws {
        try await inner.set(value, forKey: key, expiresAt: expiresAt)
    }
    func backfill(_ fill: Backfill<Data>, forKey key: String) async throws {
        try await gate.wait()
        try await inner.backfill(fill, forKey: key)
    }
    func remove(_ key: String) async throws { try await inner.remove(key) }
}
