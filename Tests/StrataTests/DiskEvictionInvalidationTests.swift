import Foundation
import Strata
import StrataTestSupport
import Testing

/// A disk level's own evictions are its own deletes: they are not reported to
/// the levels above as another writer's change. (Under a workload the explorer
/// logged "invalidated key:… (by another client, via L2)" for a private
/// temporary directory, and L1 dropped those keys: hundreds of removes a second.)
@Suite struct DiskEvictionInvalidationTests {
    @Test func evictionsByThisLevelAreNotReportedAbove() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 8 << 10, policy: .adaptive)
        let other = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20)
        let cache = memory + disk
        let value = String(repeating: "v", count: 1000)
        // About 8 values fit: writing 64 evicts most of them, through the composition.
        for i in 0..<64 { try await cache.set(value, forKey: "k\(i)") }
        for round in 0..<4 { for i in 0..<64 { _ = try await disk.getIfPresent("k\((i * 7 + round) % 64)") } }
        #expect(disk.count < 64, "the disk level evicted")
        #expect(memory.value(forKey: "k0") == value, "the memory level holds every key")
        // Events arrive in order: once another writer's change to the marker
        // is seen, the evictions' events have been handled too.
        try await cache.set("m", forKey: "marker")
        try await other.set("changed", forKey: "marker")
        let deadline = ContinuousClock.now + .seconds(5)
        while memory.value(forKey: "marker") != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(memory.value(forKey: "marker") == nil, "the other writer's change was reported")
        // Only the other writer's change, maybe twice: when our own rename's
        // event is handled after the other writer replaced the file, the
        // file no longer holds our entry, and that is reported too.
        #expect((1...2).contains(disk.invalidationsReported), "only the other writer's change: \(disk.invalidationsReported)")
        let dropped = (0..<64).filter { memory.value(forKey: "k\($0)") != value }
        #expect(dropped.isEmpty, "evictions below dropped \(dropped.count) keys above")
    }
}
