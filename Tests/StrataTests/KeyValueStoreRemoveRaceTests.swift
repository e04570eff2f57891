import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The cache-aside race on a key-value store domain shared by processes:
/// one process's load of the origin's old value is in flight when another
/// process changes the origin and removes the key. The load's landing must
/// not bring the removed value back for every process on the domain (the
/// disk and Redis levels stop it with tombstones).
@Suite struct KeyValueStoreRemoveRaceTests {
    static let old = Data("old".utf8)

    /// A loader that waits at a gate before answering the origin's old value.
    final class GatedLoader: Sendable {
        let gate = Gate()
        func load(_ key: String) async throws -> Data {
            try await gate.wait()
            return KeyValueStoreRemoveRaceTests.old
        }
    }

    @Test func aLoadThatBeganBeforeAnotherProcessesRemoveDoesNotLand() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let store = try KeyValueStoreLevel<String, Data>(name: "shared", directory: dir.url)
        try await store.set(Self.old, forKey: "other")  // the domain file exists
        let stack = MemoryCacheLevel<String, Data>(capacity: 1 << 20) + store
        let loader = GatedLoader()
        let get = Task { try await stack.get("k", ttl: .seconds(60), load: loader.load) }
        #expect(await poll { loader.gate.waiting == 1 }, "the load began")
        // Another process changed the origin and removes the key.
        let process = Process()
        process.executableURL = productsDirectory.appendingPathComponent("StrataDiskWorker")
        process.arguments = [dir.path, "kv-remove", "shared", "k"]
        try process.run()
        #expect(await process.exit() && process.terminationStatus == 0)
        loader.gate.open()
        #expect(try await get.value == Self.old, "the get overlapped the remove: its answer stands")
        await stack.waitForPendingWrites()
        let fresh = try KeyValueStoreLevel<String, Data>(name: "shared", directory: dir.url)
        #expect(try await fresh.getIfPresent("k") == nil, "the removed value landed for every process")
        // A read that begins after the remove lands.
        try await store.backfill(Backfill(value: Data("new".utf8), expiresAt: nil, readStartedAt: .now), forKey: "k")
        #expect(try await fresh.getIfPresent("k") == Data("new".utf8))
    }

    @Test func aBackfillWhoseReadBeganBeforeAnotherLevelsRemoveOrClearIsDeclined() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let store = try KeyValueStoreLevel<String, Data>(name: "shared", directory: dir.url)
        let other = try KeyValueStoreLevel<String, Data>(name: "shared", directory: dir.url)
        let readStart = ContinuousClock.now
        try await other.remove("k")
        await #expect(throws: BackfillDeclined.self) {
            try await store.backfill(Backfill(value: Self.old, expiresAt: nil, readStartedAt: readStart), forKey: "k")
        }
        let cleared = ContinuousClock.now
        await other.clear()
        await #expect(throws: BackfillDeclined.self) {
            try await store.backfill(Backfill(value: Self.old, expiresAt: nil, readStartedAt: cleared), forKey: "j")
        }
        #expect(try await other.getIfPresent("k") == nil)
        #expect(try await other.getIfPresent("j") == nil)
        #expect(other.count == 0, "a tombstone counted as an entry")
    }
}
