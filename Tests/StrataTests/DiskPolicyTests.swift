import Foundation
import Strata
import StrataTestSupport
import Testing

/// The disk level under `policy: .adaptive` (its default): the memory
/// level's W-TinyLFU deciding over entry files (costs in file bytes), with
/// `.lru` unchanged on request.
@Suite struct DiskPolicyTests {
    /// Header (56) + codec name and separator ("data\0") + a 6-byte key + 100 bytes.
    static let entrySize = 56 + 5 + 6 + 100

    func key(_ n: Int) -> String { "k" + String(n + 100_000).suffix(5) }

    func level(_ dir: TemporaryDirectory, _ policy: EvictionPolicy, entries: Int) throws -> DiskCacheLevel<String, Data> {
        try DiskCacheLevel<String, Data>(directory: dir.url, capacity: entries * Self.entrySize, policy: policy)
    }

    /// Gets each key and sets it on a miss; returns which gets hit.
    func replay(_ keys: [Int], on level: DiskCacheLevel<String, Data>) async throws -> [Bool] {
        var hits: [Bool] = []
        for n in keys {
            let hit = try await level.getIfPresent(key(n)) != nil
            if !hit { try await level.set(Data(repeating: UInt8(n & 0xFF), count: 100), forKey: key(n)) }
            hits.append(hit)
        }
        return hits
    }

    /// Sizes of the entry files really in the directory.
    func bytesOnDisk(_ dir: TemporaryDirectory) -> Int {
        dir.entryFiles().reduce(0) { total, name in
            total + ((try? FileManager.default.attributesOfItem(atPath: dir.path + "/" + name)[.size] as? Int) ?? 0)
        }
    }

    /// Disk IO dwarfs the policy's work (strata-bench --only disk: reads
    /// and evicting sets within noise of `.lru`), so `.adaptive` is the default.
    @Test func adaptiveIsTheDefaultAndLRUOnRequest() throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        #expect(level.policy == .adaptive && level.windowShare != nil)
        let lru = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, policy: .lru)
        #expect(lru.policy == .lru)
        #expect(lru.windowShare == nil && lru.admissionsRejected == 0)
    }

    @Test func resistsAScanThatFlushesLRU() async throws {
        func hotHits(_ policy: EvictionPolicy) async throws -> Int {
            let dir = TemporaryDirectory(); defer { dir.remove() }
            let level = try level(dir, policy, entries: 100)
            for _ in 0..<5 { _ = try await replay(Array(0..<80), on: level) }  // a hot set, read often
            _ = try await replay(Array(1_000..<1_500), on: level)  // a one-time scan
            #expect(level.totalSize <= 100 * Self.entrySize)
            #expect(bytesOnDisk(dir) == level.totalSize, "the index and the directory agree")
            return try await replay(Array(0..<80), on: level).filter { $0 }.count
        }
        #expect(try await hotHits(.lru) == 0)
        #expect(try await hotHits(.adaptive) >= 75)
    }

    @Test func aDeclinedSetSucceedsLeavesNoFileAndIsCounted() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try level(dir, .adaptive, entries: 10)
        for _ in 0..<4 { _ = try await replay(Array(0..<10), on: level) }
        #expect(level.count == 10)
        // A newcomer seen once loses to the often-read entries it would displace.
        try await level.set(Data(count: 100), forKey: key(99))
        #expect(try await level.getIfPresent(key(99)) == nil, "declined, yet the set succeeded")
        #expect(level.admissionsRejected >= 1)
        #expect(level.evictions >= 1)
        #expect(dir.entryFiles().count == 10, "the declined entry's file is gone")
        #expect(try await replay(Array(0..<10), on: level).allSatisfy { $0 }, "the hot entries stayed")
        // Asked for often enough, it is admitted.
        for _ in 0..<12 { try await level.set(Data(count: 100), forKey: key(99)) }
        #expect(try await level.getIfPresent(key(99)) != nil)
        #expect(level.count == 10)
    }

    /// Random sizes, random keys: the byte budget holds after every set, on
    /// the index and in the directory, and what the index knows is there.
    @Test func theByteBudgetHoldsUnderRandomSizes() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let capacity = 20_000
        let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: capacity, policy: .adaptive)
        var random = SplitMix64(seed: 11)
        for _ in 0..<1_500 {
            let n = Int.random(in: 0..<300, using: &random)
            if try await level.getIfPresent(key(n)) == nil {
                try await level.set(Data(count: Int.random(in: 1..<900, using: &random)), forKey: key(n))
            }
            #expect(level.totalSize <= capacity)
        }
        #expect(bytesOnDisk(dir) == level.totalSize)
        #expect(dir.entryFiles().count == level.count)
        #expect(level.admissionsRejected > 0)
        let share = try #require(level.windowShare)
        #expect(share > 0 && share < 1)
    }

    @Test func singleThreadedReplayIsDeterministic() async throws {
        var random = SplitMix64(seed: 5)
        let keys = (0..<2_000).map { _ in Int(Double.random(in: 0..<1, using: &random).squareRoot() * 400) }
        let a = TemporaryDirectory(), b = TemporaryDirectory()
        defer { a.remove(); b.remove() }
        let first = try level(a, .adaptive, entries: 50), second = try level(b, .adaptive, entries: 50)
        #expect(try await replay(keys, on: first) == replay(keys, on: second))
        #expect(first.admissionsRejected == second.admissionsRejected)
        #expect(first.windowShare == second.windowShare)
    }

    @Test func reopensItsEntriesAndTrims() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        do {
            let level = try level(dir, .adaptive, entries: 20)
            _ = try await replay(Array(0..<15), on: level)
            level.flushAccessTimes()
        }
        let reopened = try level(dir, .adaptive, entries: 20)
        #expect(reopened.count == 15)
        #expect(try await replay(Array(0..<15), on: reopened).allSatisfy { $0 }, "every entry survived the restart")
        await reopened.trim(toSize: 5 * Self.entrySize)
        #expect(reopened.totalSize <= 5 * Self.entrySize)
        #expect(bytesOnDisk(dir) == reopened.totalSize)
        // Trimming below the capacity once does not lower it for good.
        _ = try await replay(Array(100..<120), on: reopened)
        #expect(reopened.count > 5)
        #expect(reopened.totalSize <= 20 * Self.entrySize)
        await reopened.clear()
        #expect(reopened.count == 0 && dir.entryFiles().isEmpty)
        _ = try await replay(Array(0..<3), on: reopened)
        #expect(reopened.count == 3, "the policy takes entries again after a clear")
    }

    // Restarts and trims keep what LRU would keep, under either policy.

    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func trimAfterReopeningKeepsTheMostRecentlyRead(policy: EvictionPolicy) async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        do {
            let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, policy: policy)
            for key in ["a", "b", "c"] { try await level.set(Data(count: 100), forKey: key) }
            _ = try await level.get("a")
            level.flushAccessTimes()
        }
        let reopened = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, policy: policy)
        await reopened.trim(toSize: 2 * (56 + 5 + 1 + 100))
        #expect(try await reopened.getIfPresent("a") != nil, "read last before the restart")
        #expect(try await reopened.getIfPresent("b") == nil, "least recently used")
        #expect(try await reopened.getIfPresent("c") != nil)
        #expect(reopened.admissionsRejected == 0, "a trim declines nothing")
    }

    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func reopeningOverCapacityKeepsTheMostRecent(policy: EvictionPolicy) async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let keys = (0..<40).map { key($0) }
        do {
            let level = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, policy: .lru)
            for key in keys {
                try await level.set(Data(count: 100), forKey: key)
                _ = try await level.get(key)  // a distinct access time for each
            }
            level.flushAccessTimes()
        }
        let reopened = try level(dir, policy, entries: 20)
        #expect(reopened.count == 20 && dir.entryFiles().count == 20)
        #expect(reopened.admissionsRejected == 0 && reopened.evictions == 20)
        // New entries are not declined in favour of restored ones nobody has
        // read since the restart; those go oldest first.
        _ = try await replay(Array(100..<110), on: reopened)
        #expect(try await replay(Array(100..<110), on: reopened).allSatisfy { $0 })
        var kept = 0
        for key in keys.suffix(10) where try await reopened.getIfPresent(key) != nil { kept += 1 }
        #expect(kept == 10, "the 10 most recent restored entries are still there")
        #expect(reopened.count == 20)
    }

    @Test(arguments: [EvictionPolicy.lru, .adaptive])
    func trimAboveWhatIsHeldDeletesNothing(policy: EvictionPolicy) async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try level(dir, policy, entries: 5)
        let other = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, policy: .lru)
        for n in 10..<20 { try await other.set(Data(count: 100), forKey: key(n)) }
        for n in 10..<20 { _ = try await level.getIfPresent(key(n)) }  // indexed on read, beyond capacity
        #expect(level.count == 10)
        await level.trim(toSize: 100 * Self.entrySize)
        #expect(level.count == 10, "a trim to more than is held deletes nothing")
    }
}
