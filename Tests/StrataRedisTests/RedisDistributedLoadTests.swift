import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Testing

/// `distributedLoad`: three processes missing one key at once make one
/// origin call behind the Redis lock (three without it), and all answer the
/// value it loaded.
@Suite(.serialized) struct RedisDistributedLoadTests {
    typealias Worker = RedisMultiProcessTests.Worker

    func loads(_ server: RedisServer, _ key: String) async throws -> Int {
        Int(try await redisCLI(server, "GET", "strata-test-loads:\(key)").trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Sends `command` to every worker at once and collects the answers.
    func askAll(_ workers: [Worker], _ command: String) async -> [String] {
        let before = workers.map { $0.output.count }
        for worker in workers { worker.send(command) }
        var answers: [String] = []
        _ = await poll(timeout: .seconds(30)) {
            answers = zip(workers, before).compactMap { worker, count in
                worker.output.dropFirst(count).first { $0.hasPrefix("value ") || $0.hasPrefix("error ") }
            }
            return answers.count == workers.count
        }
        return answers
    }

    @Test func threeProcessesMissingOneKeyMakeOneOriginCall() async throws {
        let server = try await RedisServer()
        let workers = try (0..<3).map { _ in try Worker(url: server.url, prefix: "dl:") }
        defer { for worker in workers { worker.process.terminate() } }
        for worker in workers {
            #expect(await poll(timeout: .seconds(20)) { worker.output.contains("ready") }, "worker subscribed")
        }
        // Without the lock: each process loads.
        let alone = await askAll(workers, "load plain 300")
        #expect(alone.count == 3 && alone.allSatisfy { $0.hasPrefix("value plain loaded by") }, "\(alone)")
        #expect(try await loads(server, "plain") == 3)
        // Behind it: one load, one value everywhere.
        let shared = await askAll(workers, "dload k 300")
        #expect(shared.count == 3 && Set(shared).count == 1 && shared[0].hasPrefix("value k loaded by"), "\(shared)")
        #expect(try await loads(server, "k") == 1, "origin calls behind the lock")
        #expect(try await redisCLI(server, "EXISTS", "strata-lock:dl:k").contains("0"), "the lock was released")
        for worker in workers { await worker.stop() }
        await server.kill()
    }

    @Test func aFailingLoaderReleasesTheLockAndTheNextCallerLoads() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "dl2:", codec: .string)
        struct Down: Error {}
        let failing = redis.distributedLoad(ttl: .seconds(60)) { _ -> String in throw Down() }
        await #expect(throws: Down.self) { try await failing("k") }
        #expect(try await redisCLI(server, "EXISTS", "strata-lock:dl2:k").contains("0"))
        let working = redis.distributedLoad(ttl: .seconds(60)) { key in "row \(key)" }
        #expect(try await working("k") == "row k")
        // (On a loaded machine a back-fill whose reply is late is taken back: load again.)
        #expect(await poll(timeout: .seconds(20)) {
            if (try? await redis.getIfPresent("k")) == "row k" { return true }
            _ = try? await working("k")
            return false
        }, "the loader's value is in Redis")
        await redis.shutdown(); await server.kill()
    }

    @Test func aRemoveDuringTheLoadKeepsTheLoadedValueOutOfRedis() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "dl3:", codec: .string)
        let load = redis.distributedLoad(ttl: .seconds(60)) { key in
            try await redis.remove(key)  // the data changed and the key was removed while loading
            return "loaded before the change"
        }
        #expect(try await load("k") == "loaded before the change")
        #expect(try await redis.getIfPresent("k") == nil, "the load's older value landed over a later remove")
        await redis.shutdown(); await server.kill()
    }
}
