import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// A disk level alone in its process never reports its own writes as
/// another writer's: the levels above would drop hot keys for nothing, and
/// the explorer would log them as "invalidated … by another client".
///
/// The watch's events arrive in order, so a change another level on the same
/// directory makes last (the sentinel) is heard after every event the writes
/// before it caused: once it is heard, nothing else of theirs is to come.
@Suite struct DiskOwnChangeTests {
    /// What a listener heard from elsewhere (not a report of the level's own write).
    final class Foreign: Sendable {
        private let list = Mutex<[CacheInvalidation<String>]>([])
        let subscription = Mutex<CacheSubscription?>(nil)
        func append(_ invalidation: CacheInvalidation<String>) { list.withLock { $0.append(invalidation) } }
        var all: [CacheInvalidation<String>] { list.withLock { $0 } }
    }

    static func listen(_ disk: DiskCacheLevel<String, Data>) -> Foreign {
        let foreign = Foreign()
        foreign.subscription.withLock {
            $0 = disk.subscribe { change in
                if !change.isLocalWrite { foreign.append(change.invalidation) }
            }
        }
        return foreign
    }

    /// Another level on `dir` writes the sentinel, which `disk` has read (so
    /// its watch knows the key), and the listener hears it.
    static func awaitSentinel(_ disk: DiskCacheLevel<String, Data>, _ foreign: Foreign, in dir: TemporaryDirectory) async throws -> Bool {
        _ = try await disk.getIfPresent("sentinel")
        let other = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        try await other.set(Data("s".utf8), forKey: "sentinel")
        return await poll { foreign.all.contains(.key("sentinel")) }
    }

    @Test func aKeySetAgainAndAgainIsNeverReportedAsAnotherWritersChange() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let foreign = Self.listen(disk)
        // Two writers of the same keys, back to back: renames of one entry
        // file follow each other before the watch reports the first.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    for round in 0..<200 {
                        try await disk.set(Data("\(writer)-\(round)".utf8), forKey: "hot-\(round % 3)")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await Self.awaitSentinel(disk, foreign, in: dir))
        #expect(foreign.all == [.key("sentinel")], "own writes reported as another writer's: \(foreign.all.count - 1)")
    }

    @Test func aComposedWorkloadOverADiskLevelReportsNothingFromElsewhere() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 64 << 10)
        let memory = MemoryCacheLevel<String, Data>(capacity: 16 << 10)
        let origin = BasicFetcher<String, Data>(get: { Data(repeating: UInt8($0.count), count: 512) })
        let foreign = Self.listen(disk)
        let cache = memory + disk + origin
        // Gets that miss and back-fill, sets, removes and evictions (the disk
        // holds ~120 of the 400 keys), as the explorer's workloads make them.
        for round in 0..<1200 {
            let key = "k\((round * 7919) % 400)"
            switch round % 10 {
            case 0: try await cache.set(Data("v\(round)".utf8), forKey: key)
            case 1: try await cache.remove(key)
            default: _ = try await cache.getIfPresent(key)
            }
        }
        await cache.waitForPendingWrites()
        #expect(try await Self.awaitSentinel(disk, foreign, in: dir))
        #expect(foreign.all == [.key("sentinel")], "own writes reported as another writer's: \(foreign.all.count - 1)")
    }
}
