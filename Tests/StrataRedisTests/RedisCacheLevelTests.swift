import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

@Suite(.serialized) struct RedisCacheLevelTests {
    func commandCalls(_ level: RedisCacheLevel<String, String>, _ command: String) async throws -> Int {
        guard case .bulkString(let buffer?) = try await level.client.send("INFO", "commandstats") else { return -1 }
        let text = String(buffer: buffer)
        guard let line = text.split(separator: "\r\n").first(where: { $0.hasPrefix("cmdstat_\(command):calls=") }) else { return 0 }
        return Int(line.dropFirst("cmdstat_\(command):calls=".count).prefix { $0.isNumber }) ?? -1
    }

    @Test func roundTripMissRemoveAndTypedValues() async throws {
        let server = try await RedisServer()
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "t1:")
        try await level.ping()
        try await level.set("hello", forKey: "k")
        #expect(try await level.get("k") == "hello")
        #expect(try await level.contains("k"))
        await #expect(throws: FetchError.valueNotInCache) { try await level.get("missing") }
        try await level.remove("k")
        #expect(try await level.getIfPresent("k") == nil)
        try await level.remove("never-there")
        struct Profile: Codable, Equatable, Sendable { var name: String }
        let profiles = try RedisCacheLevel<String, Profile>(url: server.url, prefix: "t1p:")
        try await profiles.set(Profile(name: "Ada"), forKey: "ada")
        #expect(try await profiles.get("ada") == Profile(name: "Ada"))
        await level.shutdown(); await profiles.shutdown(); await server.kill()
    }

    @Test func badURLsThrowAndNoConnectionIsMadeAtInit() async throws {
        #expect(throws: RedisError.self) { try RedisCacheLevel<String, String>(url: "http://x", prefix: "p") }
        #expect(throws: RedisError.self) { try RedisCacheLevel<String, String>(url: "redis://host:99999", prefix: "p") }
        #expect(throws: RedisError.self) { try RedisCacheLevel<String, String>(url: "redis://host/abc", prefix: "p") }
        let configuration = try RedisConfiguration(url: "redis://:secret@cache.internal:6380/3")
        #expect(configuration.host == "cache.internal" && configuration.port == 6380)
        #expect(configuration.password == "secret" && configuration.database == 3)
        // Nothing listens here: init succeeds, requests fail with a typed error.
        let dead = try RedisCacheLevel<String, String>(url: "redis://127.0.0.1:1", prefix: "p")
        let error = await #expect(throws: FetchError.self) { try await dead.get("k") }
        #expect(error?.cause(as: RedisError.self) != nil && error?.level == "redis" && error?.key == "k")
    }

    @Test func thousandConcurrentGetsPipelineOnOneConnectionAndMGETBatches() async throws {
        let server = try await RedisServer()
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "t2:", connections: 1)
        for i in 0..<100 { try await level.set("v\(i)", forKey: "k\(i)") }
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for i in 0..<1000 { group.addTask { (i, try await level.get("k\(i % 100)")) } }
            for try await (i, value) in group { #expect(value == "v\(i % 100)") }
        }
        let before = try await commandCalls(level, "mget")
        let some = await level.batchGetSome(["k1", "k2", "nope", "k3", "k1"])
        #expect(some == ["k1": "v1", "k2": "v2", "k3": "v3"])
        #expect(try await commandCalls(level, "mget") == before + 1, "one MGET for the whole batch")
        await level.shutdown(); await server.kill()
    }

    @Test func ttlPerLevelAndPerSet() async throws {
        let server = try await RedisServer()
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "t3:", defaultTTL: .seconds(60))
        try await level.set("a", forKey: "level-ttl")
        try await level.set("b", forKey: "short", ttl: .milliseconds(600))  // room for a loaded machine
        guard case .integer(let pttl) = try await level.client.send("PTTL", "t3:level-ttl") else { Issue.record("no PTTL"); return }
        #expect(pttl > 50_000 && pttl <= 60_000)
        #expect(try await level.get("short") == "b")
        // Redis expires it server-side: wait for that (bounded), no clock of ours involved.
        var gone = false
        for _ in 0..<200 where !gone {
            try await Task.sleep(for: .milliseconds(20))
            gone = try await level.getIfPresent("short") == nil
        }
        #expect(gone)
        let expiring = level.expires(at: .seconds(30))
        try await expiring.set("c", forKey: "wrapped")
        guard case .integer(let wrapped) = try await level.client.send("PTTL", "t3:wrapped") else { return }
        #expect(wrapped > 20_000 && wrapped <= 30_000)
        await level.shutdown(); await server.kill()
    }

    @Test func clearDeletesOnlyItsPrefixEvenAnOddOne() async throws {
        let server = try await RedisServer()
        let odd = try RedisCacheLevel<String, String>(url: server.url, prefix: "odd prefix*[x]\n\u{0}:")
        let other = try RedisCacheLevel<String, String>(url: server.url, prefix: "odd prefix:")
        for i in 0..<2500 { try await odd.set("\(i)", forKey: "k\(i)") }
        try await other.set("keep", forKey: "k1")
        _ = try await odd.client.send("SET", "unrelated", "keep")
        #expect(try await odd.clearPrefix() == 2500)
        #expect(try await odd.getIfPresent("k1") == nil)
        #expect(try await other.get("k1") == "keep")
        guard case .integer(let size) = try await odd.client.send("DBSIZE") else { return }
        // The other level's key, the unrelated one, and the clear's tombstone (outside every prefix).
        #expect(size == 3)
        #expect(try await odd.client.send([Array("EXISTS".utf8), odd.tombstoneOfAll(for: odd.prefix)]) == .integer(1))
        await odd.shutdown(); await other.shutdown(); await server.kill()
    }

    @Test func undecodableValueIsAMissCountedAndLeft() async throws {
        let server = try await RedisServer()
        struct Profile: Codable, Equatable, Sendable { var name: String }
        let profiles = try RedisCacheLevel<String, Profile>(url: server.url, prefix: "t5:")
        let raw = try RedisCacheLevel<String, String>(url: server.url, prefix: "t5:")
        try await raw.set("not json", forKey: "p")
        #expect(try await profiles.getIfPresent("p") == nil)
        #expect(profiles.decodeFailures == 1)
        #expect(try await raw.get("p") == "not json", "left for its writer")
        await profiles.shutdown(); await raw.shutdown(); await server.kill()
    }

    @Test func killedRedisFailsFastTypedAndReconnectsWhenBack() async throws {
        let server = try await RedisServer()
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "t6:", commandTimeout: .milliseconds(500))
        try await level.set("v", forKey: "k")
        await server.kill()
        let start = ContinuousClock.now
        do {
            _ = try await level.get("k")
            Issue.record("expected an error with Redis down")
        } catch let fetch as FetchError {
            let error = try #require(fetch.cause(as: RedisError.self))
            #expect([.connectionClosed, .timeout].contains(error) || "\(error)".contains("connect"), "\(error)")
        }
        #expect((await #expect(throws: FetchError.self) { try await level.get("k") })?.cause(as: RedisError.self) != nil)
        #expect(ContinuousClock.now - start < .seconds(3), "nothing hangs")
        // In a composition, the outage is a fall-through to the next level.
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let cache = memory + level + BasicFetcher<String, String> { "origin:\($0)" }
        #expect(try await cache.get("k") == "origin:k")

        try await server.restart()
        let deadline = ContinuousClock.now + .seconds(20)
        var reconnected = false
        while !reconnected, ContinuousClock.now < deadline {
            do {
                try await level.set("again", forKey: "k2")
                reconnected = true
            } catch {
                try await Task.sleep(for: .milliseconds(50))  // the backoff decides when it retries
            }
        }
        #expect(reconnected, "reconnected after the restart")
        // The answered write showed the server is up: the read is not failed
        // fast for what is left of the circuit breaker's cool-down.
        #expect(try await level.get("k2") == "again")
        await level.shutdown(); await server.kill()
    }

    @Test func inFlightRequestsFailWhenRedisDies() async throws {
        let server = try await RedisServer()
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "t7:", connections: 1,
                                                        commandTimeout: .seconds(5))
        try await level.ping()
        // BLPOP-like stall: DEBUG SLEEP keeps the server busy while requests queue.
        async let stall = try? level.client.send("DEBUG", "SLEEP", "2")
        try await Task.sleep(for: .milliseconds(100))
        async let queued = Result(catching: { try await level.get("k") })
        try await Task.sleep(for: .milliseconds(100))
        let start = ContinuousClock.now
        await server.kill()
        let outcome = await queued
        _ = await stall
        #expect((#expect(throws: FetchError.self) { try outcome.get() })?.cause(as: RedisError.self) != nil)
        #expect(ContinuousClock.now - start < .seconds(2), "failed when the connection closed, not at the timeout")
        await level.shutdown()
    }

    @Test func timedOutConnectionIsNeverReused() async throws {
        let server = try await RedisServer()
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "t8:", connections: 1,
                                                        commandTimeout: .milliseconds(200))
        try await level.set("right", forKey: "a")
        try await level.set("wrong", forKey: "b")
        await #expect(throws: RedisError.timeout) { try await level.client.send("DEBUG", "SLEEP", "0.5") }
        // The late "+OK" of DEBUG SLEEP must not be taken as the answer to this get.
        var answer: String?
        for _ in 0..<50 where answer == nil {
            answer = try? await level.get("a")
            if answer == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(answer == "right")
        await level.shutdown(); await server.kill()
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
