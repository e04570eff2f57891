import Foundation
import NIOCore
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// Leases (`leases: true`) against the cache-aside race with a writer that is
/// not Strata: a read misses Redis and reads the origin's old answer; the
/// origin changes and its writer deletes the key in Redis (`redis-cli DEL`),
/// which was absent, so Redis changes and reports nothing; the back-fill
/// must not store the old answer. The tests that hold a read at the origin
/// turn tracking off, so the lease is what is tested (with tracking, the
/// `DEL` of a lease is also reported, and drops the back-fill in flight).
@Suite(.serialized) struct RedisLeaseTests {
    typealias Level = RedisCacheLevel<String, String>

    /// memory + redis + a held origin, and a second level on the prefix for raw reads.
    func setup(_ server: RedisServer, prefix: String, leases: Bool, tracking: Bool = false) throws
        -> (cache: ComposedCache<ComposedCache<MemoryCacheLevel<String, String>, Level>, SnapshotOrigin>,
            memory: MemoryCacheLevel<String, String>, redis: Level, origin: SnapshotOrigin) {
        let redis = try Level(url: server.url, prefix: prefix, invalidatesLevelsAbove: tracking, leases: leases)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let origin = SnapshotOrigin()
        return (memory + redis + origin, memory, redis, origin)
    }

    /// The Redis key's raw value (`redis-cli GET`), "" when absent.
    func raw(_ server: RedisServer, _ name: String) async throws -> String {
        try await redisCLI(server, "GET", name).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The race itself, without leases: the old answer is stored in Redis
    /// for good (the known limitation leases close; this also shows the
    /// test below would see the race).
    @Test func withoutLeasesAForeignDeleteOfAnAbsentKeyLetsTheOldAnswerIn() async throws {
        let server = try await RedisServer()
        let (cache, _, redis, origin) = try setup(server, prefix: "lease-0:", leases: false)
        // A back-fill whose script comes back later than its margin is taken
        // back (a busy machine): then the race is tried again on a new key.
        var outcomes: [String] = []
        for attempt in 0..<3 {
            let key = "k\(attempt)"
            let skippedBefore = cache.backfillsSkipped
            origin.close()
            try await origin.set("old", forKey: key)
            let read = Task { try await cache.getIfPresent(key) }
            #expect(await poll { origin.reads.load(ordering: .relaxed) == attempt + 1 })
            try await origin.set("new", forKey: key)
            try await redisCLI(server, "DEL", "lease-0:\(key)")
            origin.open()
            #expect(try await read.value == "old")
            await cache.waitForPendingWrites()
            let held = try await raw(server, "lease-0:\(key)")
            outcomes.append("\(key): Redis holds '\(held)', back-fills declined \(cache.backfillsSkipped - skippedBefore)")
            if held == "old" || cache.backfillsSkipped == skippedBefore { break }
        }
        #expect(outcomes.last?.contains("holds 'old'") == true, "the race did not happen: this test cannot see it: \(outcomes)")
        await redis.shutdown(); await server.kill()
    }

    @Test func withLeasesAForeignDeleteAfterTheOriginChangedDeclinesTheBackfill() async throws {
        let server = try await RedisServer()
        let (cache, memory, redis, origin) = try setup(server, prefix: "lease-a:", leases: true)
        try await origin.set("old", forKey: "k")
        let read = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 1 })
        #expect(RedisLease.isLease(Array(try await raw(server, "lease-a:k").utf8)), "the miss left a lease")
        try await origin.set("new", forKey: "k")
        try await redisCLI(server, "DEL", "lease-a:k")  // the writer's cache-aside delete ends the lease
        origin.open()
        #expect(try await read.value == "old")
        await cache.waitForPendingWrites()
        #expect(try await raw(server, "lease-a:k") == "", "the old answer was written into Redis")
        #expect(memory.value(forKey: "k") == nil, "the old answer was written into memory")
        #expect(cache.backfillsSkipped >= 1)
        // The next read back-fills the new answer.
        #expect(try await cache.getIfPresent("k") == "new")
        await cache.waitForPendingWrites()
        #expect(try await raw(server, "lease-a:k") == "new")
        #expect(memory.value(forKey: "k") == "new")
        await redis.shutdown(); await server.kill()
    }

    @Test func withLeasesAForeignSetInTheMeantimeIsKept() async throws {
        let server = try await RedisServer()
        let (cache, memory, redis, origin) = try setup(server, prefix: "lease-b:", leases: true)
        try await origin.set("old", forKey: "k")
        let read = Task { try await cache.getIfPresent("k") }
        #expect(await poll { origin.reads.load(ordering: .relaxed) == 1 })
        try await redisCLI(server, "SET", "lease-b:k", "foreign")
        origin.open()
        _ = try await read.value
        await cache.waitForPendingWrites()
        #expect(try await raw(server, "lease-b:k") == "foreign")
        #expect(memory.value(forKey: "k") == nil)
        await redis.shutdown(); await server.kill()
    }

    /// With tracking on (the default), the lease is written so that Redis
    /// does not report it back (which would drop the back-fill in flight):
    /// every back-fill lands in Redis. (Memory may lose the key again when
    /// Redis reports the back-fill script itself; see the README.)
    @Test func withLeasesAndTrackingAMissIsBackfilledEverywhere() async throws {
        let server = try await RedisServer()
        let redis = try Level(url: server.url, prefix: "lease-c:", leases: true)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis + BasicFetcher<String, String>(getIfPresent: { "v-\($0)" })
        #expect(await poll { redis.isReceivingInvalidations })
        for n in 0..<20 {
            #expect(try await cache.getIfPresent("k\(n)") == "v-k\(n)")
        }
        await cache.waitForPendingWrites()
        for n in 0..<20 {
            #expect(try await raw(server, "lease-c:k\(n)") == "v-k\(n)")
            #expect(memory.value(forKey: "k\(n)").map { $0 == "v-k\(n)" } ?? true)
        }
        #expect(cache.backfillsSkipped == 0)
        await redis.shutdown(); await server.kill()
    }

    /// With nothing else writing, every back-fill finds the lease its read
    /// recorded, however busy the process: each is judged by its read's own
    /// start, which comes after the record (a start re-derived from an age
    /// measured a moment later fell before the record now and then, and the
    /// back-fill was declined: 21–25 of 3,200 here under load).
    @Test func withLeasesNoBackfillIsDeclinedUnderLoad() async throws {
        let server = try await RedisServer()
        let redis = try Level(url: server.url, prefix: "lease-g:", connections: 4, invalidatesLevelsAbove: false, leases: true)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 22)
        let cache = memory + redis + BasicFetcher<String, String>(getIfPresent: { "v-\($0)" })
        let readers = 8, keysPerReader = 400
        await withTaskGroup(of: Void.self) { group in
            for reader in 0..<readers {
                group.addTask {
                    for n in 0..<keysPerReader { _ = try? await cache.getIfPresent("r\(reader)-\(n)") }
                }
            }
            // Busy threads beside the readers: they are preempted often.
            for _ in 0..<4 {
                group.addTask {
                    let end = ContinuousClock.now + .milliseconds(300)
                    var spin = 0
                    while ContinuousClock.now < end { spin &+= 1; if spin % 4096 == 0 { await Task.yield() } }
                }
            }
        }
        await cache.waitForPendingWrites()
        // Every back-fill found the lease its read recorded (a busy machine
        // may still decline one whose script came back later than the
        // margin allows, so the skipped count is printed, not pinned).
        #expect(redis.missBook.unrecordedReads == 0, "back-fills that found no lease recorded before their read")
        print("leases under load: \(cache.backfillsSkipped) of \(readers * keysPerReader) back-fills declined")
        #expect(cache.backfillFailures == 0)
        await redis.shutdown(); await server.kill()
    }

    /// `values(forKey:)` (stale then fresh) back-fills with leases too: its
    /// back-fill is judged from after its upper read, where the lease its
    /// miss left was recorded (judged from before, it never found one, and no
    /// stream ever filled Redis or memory).
    @Test func withLeasesAStreamsMissIsBackfilled() async throws {
        let server = try await RedisServer()
        let redis = try Level(url: server.url, prefix: "lease-h:", invalidatesLevelsAbove: false, leases: true)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis + BasicFetcher<String, String>(getIfPresent: { "v-\($0)" })
        for n in 0..<5 {
            var readings: [String] = []
            for try await reading in cache.values(forKey: "k\(n)") { readings.append(reading.value) }
            #expect(readings == ["v-k\(n)"])
        }
        await cache.waitForPendingWrites()
        for n in 0..<5 {
            #expect(try await raw(server, "lease-h:k\(n)") == "v-k\(n)")
            #expect(memory.value(forKey: "k\(n)") == "v-k\(n)")
        }
        #expect(cache.backfillsSkipped == 0)
        await redis.shutdown(); await server.kill()
    }

    /// Another process's lease reads as a miss on every read path, and a
    /// back-fill of a read that saw it replaces it.
    @Test func anotherProcesssLeaseIsAMissAndItsReaderMayBackfill() async throws {
        let server = try await RedisServer()
        let redis = try Level(url: server.url, prefix: "lease-d:", invalidatesLevelsAbove: false, leases: true)
        let lease = RedisLease.newLease()
        for name in ["lease-d:a", "lease-d:b"] {
            _ = try await redis.client.send([RedisCommandName.set, Array(name.utf8), lease])
        }
        #expect(try await redis.getIfPresent("a") == nil)
        #expect(try await redis.entry(forKey: "a") == nil)
        #expect(await redis.entries(forKeys: ["a", "b"], maxConcurrency: nil).allSatisfy { $0 == nil })
        #expect(try await redis.contains("a") == false)
        let cache = redis + BasicFetcher<String, String>(getIfPresent: { "v-\($0)" })
        #expect(try await cache.getIfPresent("b") == "v-b")
        await cache.waitForPendingWrites()
        #expect(try await raw(server, "lease-d:b") == "v-b")
        await redis.shutdown(); await server.kill()
    }

    /// A batch read leaves a lease in every key it missed, in one round trip.
    @Test func aBatchReadLeavesALeaseInEveryKeyItMissed() async throws {
        let server = try await RedisServer()
        let redis = try Level(url: server.url, prefix: "lease-e:", invalidatesLevelsAbove: false, leases: true)
        try await redis.set("there", forKey: "present")
        let read = await redis.entries(forKeys: ["present", "x", "y"], maxConcurrency: nil)
        #expect(read.map { $0?.value } == ["there", nil, nil])
        #expect(try await raw(server, "lease-e:present") == "there")
        for name in ["lease-e:x", "lease-e:y"] {
            #expect(RedisLease.isLease(Array(try await raw(server, name).utf8)), "\(name)")
        }
        await redis.shutdown(); await server.kill()
    }

    /// Two processes' levels miss the same key: one back-fill lands, the
    /// other is declined, and both memories agree with Redis.
    @Test func twoReadersOfOneKeyEndInAgreement() async throws {
        let server = try await RedisServer()
        let a = try setup(server, prefix: "lease-f:", leases: true)
        let b = try setup(server, prefix: "lease-f:", leases: true)
        try await a.origin.set("v", forKey: "k")
        try await b.origin.set("v", forKey: "k")
        let readA = Task { try await a.cache.getIfPresent("k") }
        #expect(await poll { a.origin.reads.load(ordering: .relaxed) == 1 })
        b.origin.open()
        #expect(try await b.cache.getIfPresent("k") == "v")  // saw A's lease: a miss; back-fills over it
        await b.cache.waitForPendingWrites()
        #expect(try await raw(server, "lease-f:k") == "v")
        a.origin.open()
        #expect(try await readA.value == "v")
        await a.cache.waitForPendingWrites()
        #expect(try await raw(server, "lease-f:k") == "v")
        #expect(a.cache.backfillsSkipped >= 1, "A's lease was replaced: its back-fill is declined")
        #expect(a.memory.value(forKey: "k") == nil && b.memory.value(forKey: "k") == "v")
        await a.redis.shutdown(); await b.redis.shutdown(); await server.kill()
    }

    @Test func aLeaseIsRecognisedOnlyByItsWholeMarker() {
        #expect(RedisLease.isLease(RedisLease.newLease()))
        #expect(!RedisLease.isLease(RedisLease.marker), "the marker alone is no lease")
        #expect(!RedisLease.isLease(Array("strata-lease:x".utf8)))
        #expect(RedisLease.newLease() != RedisLease.newLease())
    }

    /// The lease a back-fill uses: the latest recorded before its read
    /// began (its read's miss recorded it); "none" recorded last declines it.
    @Test func theBookHandsABackfillTheLatestLeaseRecordedBeforeItsReadBegan() {
        let book = RedisMissBook()
        let name = Array("p:k".utf8)
        let before = ContinuousClock.now
        book.record(name, lease: [1], serverTime: nil)
        let afterFirst = ContinuousClock.now
        book.record(name, lease: nil, serverTime: nil)
        let afterNone = ContinuousClock.now
        book.record(name, lease: [3], serverTime: nil)
        #expect(book.record(for: name, readStart: before) == nil, "nothing recorded before the read")
        #expect(book.record(for: name, readStart: afterFirst)?.lease == [1])
        #expect(book.record(for: name, readStart: afterNone)?.lease == nil, "the read that recorded no lease declines")
        #expect(book.record(for: name, readStart: ContinuousClock.now)?.lease == [3])
        #expect(book.record(for: Array("p:other".utf8), readStart: ContinuousClock.now) == nil)
    }
}

/// Leases under load: readers through `redis + origin` on a few keys while a
/// writer that is not Strata keeps changing the origin and then deleting the
/// key (plain `DEL` on a connection of its own). Once all is quiet, Redis
/// holds for each key nothing or the origin's current answer: never an
/// older one. (Without leases the same run leaves older answers behind:
/// `STRATA_LEASE_STRESS_OFF=1` shows it.)
@Suite(.serialized) struct RedisLeaseStressTests {
    /// The origin: a version per key; each read takes its snapshot, then
    /// waits a little (the window in which the writer strikes).
    final class VersionedOrigin: CacheLevel, Sendable {
        let versions = Mutex<[String: Int]>([:])
        func getIfPresent(_ key: String) async throws -> String? {
            let version = versions.withLock { $0[key, default: 0] }
            try? await Task.sleep(for: .microseconds(Int.random(in: 100...1500)))  // the origin's latency
            return "\(key)@\(version)"
        }
        func bump(_ key: String) { versions.withLock { $0[key, default: 0] += 1 } }
        func current(_ key: String) -> String { "\(key)@\(versions.withLock { $0[key, default: 0] })" }
        func set(_ value: String, forKey key: String) async throws {}
        func remove(_ key: String) async throws {}
        func clear() async {}
        func onMemoryWarning() async {}
    }

    @Test(arguments: [false, true])
    func redisNeverKeepsAnOlderAnswerThanTheOrigin(tracking: Bool) async throws {
        let leases = ProcessInfo.processInfo.environment["STRATA_LEASE_STRESS_OFF"] == nil
        let server = try await RedisServer()
        let prefix = "lease-s\(tracking ? 1 : 0):"
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: prefix, connections: 4,
                                                         invalidatesLevelsAbove: tracking, leases: leases)
        let writer = RedisClient(configuration: try RedisConfiguration(url: server.url))
        let origin = VersionedOrigin()
        let cache = redis + origin
        let keys = (0..<8).map { "k\($0)" }
        let deadline = ContinuousClock.now + .seconds(3)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    while ContinuousClock.now < deadline { _ = try? await cache.getIfPresent(keys.randomElement()!) }
                }
            }
            group.addTask {
                while ContinuousClock.now < deadline {
                    let key = keys.randomElement()!
                    origin.bump(key)  // the data changes, then its writer deletes the cached copy
                    _ = try? await writer.send([Array("DEL".utf8), Array((prefix + key).utf8)])
                    try? await Task.sleep(for: .microseconds(Int.random(in: 50...800)))
                }
            }
        }
        await cache.waitForPendingWrites()
        var stale: [String] = []
        for key in keys {
            guard case .bulkString(let buffer?) = try await writer.send([Array("GET".utf8), Array((prefix + key).utf8)]) else { continue }
            let held = String(buffer: buffer)
            if !RedisLease.isLease(Array(held.utf8)) && held != origin.current(key) {
                stale.append("\(key): Redis holds \(held), the origin \(origin.current(key))")
            }
        }
        #expect(stale.isEmpty, "\(stale)")
        await writer.shutdown(); await redis.shutdown(); await server.kill()
    }
}

extension RedisLeaseStressTests {
    /// The book stays bounded: past its limit the oldest records go (their
    /// back-fills are declined), the newest stay usable.
    @Test func theLeaseBookStaysBounded() {
        let book = RedisMissBook()
        for n in 0..<(RedisMissBook.recordLimit * 3) { book.record(Array("p:\(n)".utf8), lease: [1], serverTime: nil) }
        let now = ContinuousClock.now
        #expect(book.record(for: Array("p:0".utf8), readStart: now) == nil, "the oldest went")
        #expect(book.record(for: Array("p:\(RedisMissBook.recordLimit * 3 - 1)".utf8), readStart: now)?.lease == [1])
    }
}
