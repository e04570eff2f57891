// Every code block of README.md and docs/guide.md (the tour) is copied from this
// file, so the examples compile and run. Keep them in step.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Strata
import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

@Suite struct ReadmeExamples {
    @Test func diskLevel() async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        // README: The disk level
        let disk = try DiskCacheLevel<String, Data>(directory: url, capacity: 100 << 20)
        let lruDisk = try DiskCacheLevel<String, Data>(directory: url, capacity: 100 << 20, policy: .lru)
        // end
        #expect(disk.policy == .adaptive && lruDisk.policy == .lru)
    }

    @Test func quickTour() async throws {
        // README: Compose levels
        let memory = MemoryCacheLevel<String, Data>(capacity: 64 * 1024 * 1024)
        let origin = BasicFetcher<String, Data> { key in
            Data("payload for \(key)".utf8)  // e.g. an HTTP request
        }
        let cache = memory + origin.pooled()

        let value = try await cache.get("user:7")  // origin answers, memory is back-filled
        let again = try await cache.get("user:7")  // memory answers
        #expect(value == again)

        // README: Misses and failures
        if let hit = try await memory.getIfPresent("user:8") {
            print("found \(hit.count) bytes")
        } else {
            print("miss")  // a miss is nil; real failures still throw
        }
        await cache.waitForPendingWrites()
        #expect(memory.value(forKey: "user:7") == value)
    }

    /// A database for the load-through example.
    struct Database: Sendable {
        func name(of id: Int) async throws -> String? { id == 404 ? nil : "user \(id)" }
        func names(of ids: [Int]) async throws -> [Int: String] {
            Dictionary(uniqueKeysWithValues: ids.map { ($0, "user \($0)") })
        }
    }

    @Test func whenThingsFail() async throws {
        let database = Database()
        // README: When things fail
        let stack = MemoryCacheLevel<Int, String>(capacity: 1 << 20) + BasicFetcher<Int, String> { _ in nil }
        let users = stack
            .failSafe(maxStale: .seconds(3600), softTimeout: .milliseconds(100), hardTimeout: .seconds(2))
            .refreshAhead(at: 0.8)
        // Fresh when the database answers within 100 ms; else the last value
        // seen (up to an hour old, marked stale); refreshed in the background
        // once 80% of its TTL has passed.
        let name = try await users.get(7, ttl: .seconds(60)) { id in
            try await database.name(of: id) ?? "nobody"
        }
        print(users.resilienceStatistics.staleAnswers)
        // end
        #expect(name == "user 7")
    }

    @Test func loadThrough() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("strata-readme-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dir) }
        let database = Database()
        // README: Load through a stack
        let users = MemoryCacheLevel<Int, String>(capacity: 1 << 20) + (try DiskCacheLevel<Int, String>(directory: dir, capacity: 1 << 26))
        let name = try await users.get(7, ttl: .seconds(300)) { id in
            try await database.name(of: id) ?? "nobody"  // once per key, however many callers miss it
        }
        let maybe = try await users.get(404) { id in
            guard let name = try await database.name(of: id) else { return .notFound(ttl: .seconds(30)) }
            return .value(name, ttl: .seconds(300))
        }
        let many = try await users.getAll([1, 2, 3], ttl: .seconds(300)) { missing in
            try await database.names(of: missing)  // asked only for the keys no level holds
        }
        #expect(name == "user 7" && maybe == nil && many == [1: "user 1", 2: "user 2", 3: "user 3"])
    }

    @Test func transformers() async throws {
        // README: Transform keys and values
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let byID = memory.mapKeys { (id: Int) in "user:\(id)" }
        let lengths = byID.mapValues({ $0.count }, inverse: { String(repeating: "*", count: $0) })
        try await lengths.set(3, forKey: 42)
        let stored = memory.value(forKey: "user:42")  // "***"

        let numbers = TwoWayTransformationBox<String, Int>(
            transform: { guard let n = Int($0) else { throw CocoaError(.formatting) }; return n },
            inverseTransform: { String($0) }
        )
        let ints = memory.transformValues(numbers)
        try await ints.set(12, forKey: "answer")
        let twelve = try await ints.get("answer")  // 12
        #expect(stored == "***" && twelve == 12)
    }

    @Test func conditionsLanesAndPooling() async throws {
        // README: Conditions, lanes, single-flight, caps
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        let disk = MemoryCacheLevel<String, Data>(capacity: 1 << 24)  // stand-in for a disk level
        let origin = BasicFetcher<String, Data> { Data($0.utf8) }

        let smallOnly = memory.conditioned { key in !key.hasPrefix("video:") }
        let lanes = switchLevels(cacheA: smallOnly, cacheB: disk) { key in
            key.hasPrefix("video:") ? .cacheB : .cacheA
        }
        let cache = lanes + origin.capRequests(8).pooled()
        _ = try await cache.get("video:1")  // skips memory, lands in disk
        await cache.waitForPendingWrites()
        #expect(memory.count == 0 && disk.count == 1)
    }

    @Test func batches() async throws {
        // README: Batches
        let cache = MemoryCacheLevel<Int, String>(capacity: 1 << 20)
        try await cache.allBatch().set(["a", "b", "c"], forKey: [1, 2, 3])
        let some = await cache.batchGetSome([1, 2, 99], maxConcurrency: 4)  // [1: "a", 2: "b"]
        let all = try await cache.allBatch().get([3, 1])                     // ["c", "a"], key order
        #expect(some == [1: "a", 2: "b"] && all == ["c", "a"])
    }

    @Test func expiry() async throws {
        // README: Expiry
        let clock = TestClock()
        let sessions = MemoryCacheLevel<String, String>(capacity: 1 << 20, clock: clock)
            .expires(at: .seconds(30))
        try await sessions.set("token", forKey: "alice")
        clock.advance(by: .seconds(31))
        let expired = try await sessions.getIfPresent("alice")  // nil, and deleted
        #expect(expired == nil)
    }

    @Test func observability() async throws {
        // README: Statistics and traces
        let l1 = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "L1")
        let origin = BasicFetcher<String, String> { "v:\($0)" }.instrumented(name: "origin")
        let cache = l1 + origin

        let trace = RequestTrace()
        _ = try await trace.record { try await cache.get("user:7") }
        await cache.waitForPendingWrites()
        print(trace.events.map(\.description))
        // ["L1 get user:7 miss 3 µs", "origin get user:7 hit 5 µs", "L1 back-fill user:7 stored 2 µs"]

        let stats = l1.statistics.snapshot()
        print(stats.hits, stats.misses, stats.backfills, stats.getP99 ?? 0)
        #expect(stats.misses == 1 && stats.backfills == 1)
    }

    @Test func memoryPressure() async throws {
        // README: Memory pressure
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 26)
        let subscription = memory.listenToMemoryWarnings()     // MemoryPressure.shared
        let monitor = LinuxMemoryPressureMonitor()              // /proc/meminfo + cgroup v2
        monitor.start()
        // ... later
        monitor.stop()
        unsubscribeToMemoryWarnings(subscription)
    }

    /// README: The network origin, Stale then fresh (type-checked; the network
    /// tests in StrataTests run the same calls against a loopback server).
    func networkExamples(url: URL, mySession: URLSession, show: (Data, Bool) -> Void) async throws {
        let web = NetworkFetcher(timeout: .seconds(10))          // keyed by URL
        let api = URLRequestFetcher(session: mySession)          // keyed by URLRequest (headers, method)
        let cache = MemoryCacheLevel<URL, Data>(capacity: 50 << 20) + web.pooled()
        _ = (api, cache)

        let memory = MemoryCacheLevel<URL, Data>(capacity: 50 << 20)
        for try await reading in (memory + web).values(forKey: url) {
            show(reading.value, reading.source == .cached)
        }
    }

    @Test func keyValueStore() async throws {
        // README: A small persistent domain
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("strata-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let settings = try KeyValueStoreLevel<String, String>(name: "settings", directory: directory)
        try await settings.set("dark", forKey: "theme")
        #expect(try await settings.get("theme") == "dark")
    }

    /// A database for the service-cache example: counts its calls.
    final class UsersTable: Sendable {
        let calls = Mutex<[String]>([])
        func user(_ id: Int) async throws -> User {
            calls.withLock { $0.append("user \(id)") }
            return User(name: "user \(id)", joined: Date(timeIntervalSince1970: 1_700_000_000))
        }
        func find(_ id: Int) async throws -> User? {
            calls.withLock { $0.append("find \(id)") }
            return id == 404 ? nil : User(name: "user \(id)", joined: Date(timeIntervalSince1970: 1_700_000_000))
        }
        func users(_ ids: [UserID]) async throws -> [UserID: User] {
            calls.withLock { $0.append("users \(ids.map(\.rawValue).sorted())") }
            return Dictionary(uniqueKeysWithValues: ids.map { ($0, User(name: "user \($0.rawValue)", joined: .distantPast)) })
        }
    }

    // README: A service cache
    struct UserID: RawRepresentable, Hashable, Sendable, CacheKeyConvertible, RedisKeyDecodable { let rawValue: Int }
    struct User: Codable, Sendable, Equatable { let name: String; let joined: Date }
    // end

    /// Run against a real redis-server on loopback.
    @Test func serviceCache() async throws {
        let server = try await RedisServer()
        let db = UsersTable()
        let url = server.url
        let ids = [UserID(rawValue: 7), UserID(rawValue: 9), UserID(rawValue: 10)]
        // README: A service cache
        let redis = try RedisCacheLevel<UserID, User>(url: url, prefix: "user:", codec: .json())
        let users = MemoryCacheLevel<UserID, User>(countLimit: 10_000) + redis

        // Memory, else Redis, else the database (once per key for all callers), kept 5 min in both:
        let user = try await users.get(UserID(rawValue: 7), ttl: .seconds(300)) { try await db.user($0.rawValue) }
        // The loader's own TTL, and "not found" remembered for 30 s:
        let missing = try await users.get(UserID(rawValue: 404)) { id in
            guard let found = try await db.find(id.rawValue) else { return .notFound(ttl: .seconds(30)) }
            return .value(found, ttl: .seconds(600))
        }
        // Many keys: one database call for those no level has.
        let some = try await users.getAll(ids, ttl: .seconds(300)) { try await db.users($0) }
        // end
        #expect(user.name == "user 7" && missing == nil && some.count == 3 && some[ids[0]] == user)
        #expect(try await users.get(UserID(rawValue: 404)) { _ in .value(user, ttl: nil) } == nil, "not found is remembered")
        async let many = withThrowingTaskGroup(of: User.self) { group in
            for _ in 0..<50 { group.addTask { try await users.get(UserID(rawValue: 8), ttl: .seconds(300)) { try await db.user($0.rawValue) } } }
            return try await group.reduce(into: [User]()) { $0.append($1) }
        }
        #expect(try await many.count == 50)
        #expect(db.calls.withLock { $0 } == ["user 7", "find 404", "users [9, 10]", "user 8"], "one database call per key")
        await users.waitForPendingWrites()
        guard case .bulkString(let stored?) = try await redis.client.send("GET", "user:7") else { throw CancellationError() }
        #expect(String(buffer: stored).contains(#""name":"user 7""#), "GET user:7 (what redis-cli sees) reads the JSON")
        await redis.shutdown(); await server.kill()
    }

    /// Compiled, not run (it needs a Redis server; the Redis tests make the same calls).
    func redisExamples(memory: MemoryCacheLevel<String, Data>, origin: BasicFetcher<String, Data>) async throws {
        // README: A shared level on Redis
        let shared = try RedisCacheLevel<String, Data>(url: "redis://127.0.0.1:6379/0", prefix: "app:", defaultTTL: .seconds(300))
        let cache = memory + shared + origin.pooled()
        let hits = await shared.batchGetSome(["a", "b", "c"])  // one MGET
        // README: Leases
        let leased = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:6379", prefix: "user:", leases: true)
        // README: Fewest thread switches
        let user = try await withTaskExecutorPreference(shared.taskExecutor) {
            try await cache.get("user:7")
        }
        // end
        _ = (hits, user, leased)
    }
}
