import Foundation
import Strata
@testable import StrataExplorer
import StrataRedis
import StrataTestSupport
import Testing

/// `strata --readonly`: what would change a level is refused in one line;
/// reads, workloads of gets, toggles and export run; a shared Redis is never
/// written, not even by a back-fill or a lease.
@Suite struct ReadOnlyTests {
    @Test func writesAndEditsAreRefusedReadsRun() async throws {
        let model = try LiveEditTests.model(readOnly: true)
        await model.withShutdown {
            let refused: [Command] = [
                .set(key: "k", value: "v"), .remove(key: "k"), .clear(level: nil), .clear(level: "L1"), .warn,
                .setCapacity(level: "L1", capacity: .entries(5)), .setTTL(level: "L1", ttl: nil),
                .setPolicy(level: "L1", policy: .adaptive), .reload,
            ]
            for command in refused {
                let outcome = await model.execute(command)
                #expect(outcome.isError && outcome.message.hasPrefix("read-only: ")
                        && outcome.message.hasSuffix("(strata was started with --readonly)"), "\(command): \(outcome.message)")
            }
            #expect(model.panes()[0].countLimit == 100)
            let get = await model.execute(.get(key: "k"))
            #expect(!get.isError && get.message.contains("from origin"), "\(get.message)")
            #expect(!(await model.execute(.toggle(name: "nope"))).message.hasPrefix("read-only"))
            #expect(!(await model.execute(.reset)).isError)
            #expect(!(await model.execute(.sample(0))).isError)
            let path = NSTemporaryDirectory() + "strata-readonly-\(UUID().uuidString.prefix(8)).csv"
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(!(await model.execute(.export(path: path))).isError)
        }
    }

    /// A production Redis under `--readonly`: its values are read (and kept
    /// in this explorer's memory level), a miss answered by the origin is
    /// not back-filled into it, and no lease is taken (the file asks for them).
    @Test func aSharedRedisIsOnlyRead() async throws {
        let server = try await RedisServer()
        let client = try RedisClient(url: server.url)
        let writer = ExplorerModel(pipeline: try redisPipeline(server, prefix: "ro:", shared: "leases: true"))
        await writer.withShutdown {
            #expect(!(await writer.execute(.set(key: "hot", value: "from production"))).isError)
        }
        let keysBefore = try await client.send("DBSIZE")
        let model = ExplorerModel(pipeline: try redisPipeline(server, prefix: "ro:", shared: "leases: true", readOnly: true))
        try await model.withShutdown {
            // Until Redis reports changes, nothing read from it is kept above it.
            #expect(await ExplorerInvalidationTests.poll { !model.panes()[1].configuration.contains("not subscribed") })
            let hot = await model.execute(.get(key: "hot"))
            #expect(hot.message.contains("from shared") && hot.message.contains("from production"), "\(hot.message)")
            // The back-fill into L1 may land after the get's answer.
            #expect(await ExplorerInvalidationTests.poll { model.pipeline.level(named: "L1")?.holds?("hot") == true })
            for i in 0..<20 { _ = await model.execute(.get(key: "cold\(i)")) }
            #expect(model.panes()[2].stats.hits == 20)
            await model.pipeline.cache.waitForPendingWrites()
            let keysAfter = try await client.send("DBSIZE"), cold = try await client.send("GET", "ro:cold0")
            #expect(keysAfter == keysBefore)
            #expect(cold == .bulkString(nil) || cold == .null)
            #expect((await model.execute(.set(key: "hot", value: "x"))).message.hasPrefix("read-only"))
        }
        await client.shutdown()
        await server.kill()
    }
}
