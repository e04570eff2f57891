import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The key inspector's API (``LevelInspector``) on the memory, disk and
/// key-value-store levels and through wrappers: bounded listings, peeks that
/// count no use and move nothing in the policy.
@Suite struct LevelInspectionTests {
    @Test func memoryListsKeysWithCostTTLAndFrequencyAndPeeksWithoutCountingAUse() async throws {
        let clock = TestClock()
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 20, policy: .adaptive, defaultTTL: .seconds(60), clock: clock)
        try await level.set(Data("hello".utf8), forKey: "a")
        try await level.set(Data(count: 300), forKey: "b")
        for _ in 0..<6 { _ = try await level.getIfPresent("a") }
        clock.advance(by: .seconds(10))
        let inspector = try #require(level.levelInspector)
        let listed = try await inspector.keys(10).sorted { $0.key < $1.key }
        #expect(listed.map(\.key) == ["a", "b"])
        #expect(listed.map(\.size) == [5, 300])
        #expect(listed[0].ttlLeft == .seconds(50))
        #expect(listed.allSatisfy { $0.age != nil && $0.hits != nil }, "the memory level keeps a write time and hits")
        // The adaptive policy's sketch estimates every key's frequency (at least its write).
        #expect(listed.allSatisfy { ($0.frequency ?? 0) >= 1 }, "\(listed)")
        let hot = try await inspector.hotKeys(1)
        #expect(hot.keys.count == 1 && hot.keys[0].frequency == listed.compactMap(\.frequency).max())
        #expect(hot.isWholeLevel && hot.examined == 2)

        let counters = level.levelCounters
        let peeked = try #require(try await inspector.peek("a"))
        #expect(peeked.value == Data("hello".utf8))
        #expect(peeked.expiresAt == clock.now().advanced(by: .seconds(50)))
        #expect(try await inspector.peek("missing") == nil)
        #expect(level.levelCounters == counters)
        clock.advance(by: .seconds(51))
        #expect(try await inspector.peek("a") == nil, "an expired entry peeks as nothing")
        #expect(try await inspector.keys(10).isEmpty)
    }

    @Test func peekingDoesNotChangeTheLRUOrder() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 20, countLimit: 3, policy: .lru)
        for key in ["a", "b", "c"] { try await level.set(Data(key.utf8), forKey: key) }
        let order = level.keysByRecency()
        let inspector = try #require(level.levelInspector)
        for _ in 0..<5 { _ = try await inspector.peek("a") }
        _ = try await inspector.keys(10)
        #expect(level.keysByRecency() == order, "a peek is not a use")
        #expect(try await inspector.keys(3).allSatisfy { $0.frequency == nil }, "an lru level keeps no frequencies")
        try await level.set(Data("d".utf8), forKey: "d")
        #expect(level.value(forKey: "a") == nil, "the least recently used key, peeked or not, is evicted")
    }

    @Test func peekingDoesNotChangeStatisticsOrAdaptiveAdmission() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 20, countLimit: 100, policy: .adaptive)
        let stack = level.instrumented(name: "L1").normalize()
        try await stack.set(Data("v".utf8), forKey: "k")
        let before = stack.levelStatistics[0].snapshot()
        let inspector = try #require(stack.levelInspector, "found through instrumented and normalize()")
        let frequency = try await inspector.keys(1).first?.frequency
        for _ in 0..<50 { #expect(try await inspector.peek("k")?.value == Data("v".utf8)) }
        #expect(try await inspector.keys(1).first?.frequency == frequency, "peeks do not reach the sketch")
        let after = stack.levelStatistics[0].snapshot()
        #expect(after.gets == before.gets && after.hits == before.hits)
    }

    @Test func aBoundedListingOfALargeLevelReturnsAtMostTheLimit() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 30, policy: .lru)
        for i in 0..<20_000 { try level.store(Data(count: 1), forKey: "key:\(i)") }
        let inspector = try #require(level.levelInspector)
        #expect(try await inspector.keys(100).count == 100)
        #expect(try await inspector.keys(0).isEmpty)
        let all = try await inspector.keys(50_000)
        #expect(all.count == 20_000 && Set(all.map(\.key)).count == 20_000)
    }

    @Test func listingWhileWritersRunStaysConsistent() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 16, countLimit: 500, policy: .adaptive)
        let inspector = try #require(level.levelInspector)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for i in 0..<5_000 { try level.store(Data(count: i % 50), forKey: "w\(writer):\(i % 700)") }
                }
            }
            group.addTask {
                for _ in 0..<200 {
                    let listed = try await inspector.keys(1_000)
                    #expect(listed.count <= 1_000)
                    #expect(listed.allSatisfy { ($0.size ?? -1) >= 0 && ($0.size ?? 99) < 50 })
                    _ = try await inspector.peek("w0:1")
                }
            }
            try await group.waitForAll()
        }
        #expect(level.count <= 500)
    }

    @Test func diskListsKeysFromHeadersAndPeeksWithoutTouchingTheFile() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20, defaultTTL: .seconds(100), clock: clock)
        try await disk.set(Data("café".utf8), forKey: "user:1")
        try await disk.set(Data([0xff, 0x00, 0x01]), forKey: "blob")
        clock.advance(by: .seconds(5))
        let inspector = try #require(disk.instrumented(name: "L2").normalize().levelInspector)
        let listed = try await inspector.keys(10).sorted { $0.key < $1.key }
        #expect(listed.map(\.key) == ["blob", "user:1"])
        #expect(listed.allSatisfy { $0.ttlLeft == .seconds(95) })
        #expect(listed.allSatisfy { $0.age.map { $0 >= .zero && $0 < .seconds(120) } == true },
                "age since the file was written (by the wall clock, as files record it)")
        #expect(listed[1].size == 56 + 5 + "user:1".utf8.count + "café".utf8.count, "the file's bytes: header, codec and key, value")
        let files = dir.entryFiles().map { dir.path + "/" + $0 }
        let stamps = try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
        let peeked = try #require(try await inspector.peek("user:1"))
        #expect(peeked.value == Data("café".utf8))
        #expect(peeked.expiresAt == clock.now().advanced(by: .seconds(95)))
        #expect(try await inspector.peek("none") == nil)
        await disk.shutdown()
        #expect(try files.map { try Data(contentsOf: URL(fileURLWithPath: $0)) } == stamps,
                "no access time was written for a peek")
    }

    @Test func diskListingIsBounded() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 24)
        for i in 0..<300 { try await disk.set(Data(count: 10), forKey: "k\(i)") }
        let inspector = try #require(disk.levelInspector)
        #expect(try await inspector.keys(25).count == 25)
        #expect(try await inspector.keys(1_000).count == 300)
        await disk.shutdown()
        #expect(try await inspector.keys(10).isEmpty, "nothing after shutdown")
    }

    @Test func keyValueStoreListsAndPeeks() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()
        let level = try KeyValueStoreLevel<String, String>(name: "prefs", directory: dir.url, defaultTTL: .seconds(30), clock: clock)
        try await level.set("dark", forKey: "theme")
        try await level.set("en", forKey: "lang")
        let inspector = try #require(level.conditioned { _ in true }.normalize().levelInspector)
        let listed = try await inspector.keys(10).sorted { $0.key < $1.key }
        #expect(listed.map(\.key) == ["lang", "theme"])
        #expect(listed.map(\.size) == [2, 4])
        #expect(listed[0].ttlLeft == .seconds(30))
        #expect(try await inspector.keys(1).count == 1)
        #expect(try await inspector.peek("theme")?.value == "dark")
        clock.advance(by: .seconds(31))
        #expect(try await inspector.peek("theme") == nil)
        #expect(try await inspector.keys(10).isEmpty)
    }

    @Test func transformersForwardTheInspector() async throws {
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        try await level.set(Data("42".utf8), forKey: "n:7")
        let typed = level.mapValues({ Int(String(decoding: $0, as: UTF8.self)) ?? -1 }, inverse: { Data(String($0).utf8) })
            .mapKeys { (id: Int) in "n:\(id)" }
        let inspector = try #require(typed.normalize().levelInspector)
        #expect(try await inspector.peek(7)?.value == 42)
        #expect(try await inspector.peek(8) == nil)
        #expect(try await inspector.keys(5).map(\.key) == ["n:7"])
        #expect(BasicFetcher<String, Data>(getIfPresent: { _ in nil }).normalize().levelInspector == nil,
                "a level with nothing inspectable inside has no inspector")
    }
}
