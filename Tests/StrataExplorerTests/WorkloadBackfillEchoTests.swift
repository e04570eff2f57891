import Foundation
import Strata
@testable import StrataExplorer
import StrataRedis
import StrataTestSupport
import Testing

/// Redis reports a back-fill (a script, which `NOLOOP` does not cover) back to
/// the explorer that made it; the Redis level recognises it
/// (`RedisScriptEchoes`), so nothing is logged or dropped: for the explorer's
/// `get` command and the gets of a workload (`load`) alike.
@Suite(.serialized) struct WorkloadBackfillEchoTests {
    @Test func aWorkloadsOwnBackfillsAreNotBlamedOnAnotherClient() async throws {
        let server = try await RedisServer()
        let model = ExplorerModel(pipeline: try redisPipeline(server, prefix: "echo:"))
        try await model.withShutdown {
            #expect(await ExplorerInvalidationTests.poll { !model.panes()[1].configuration.contains("not subscribed") })
            let takenBackBefore = RedisProcessCounters.backfillsTakenBack.load(ordering: .relaxed)
            _ = await model.execute(.sample(0))
            _ = await model.execute(.load(pattern: .loop, keys: 50, rate: 200, seconds: nil))
            try await WorkloadSamplingTests.waitForGets(model, 50)
            _ = await model.execute(.loadStop)
            // A fence: another client's write, reported after every echo of the
            // workload's back-fills (Redis reports changes in order).
            let other = try RedisClient(url: server.url)
            _ = try await other.send("SET", "echo:fence", "x")
            #expect(await ExplorerInvalidationTests.poll {
                model.events.contains { $0.text.contains("invalidated fence (by another client") }
            })
            await other.shutdown()
            // Nobody but this explorer writes the other keys.
            let blamed = model.events.filter { $0.text.contains("by another client") && !$0.text.contains("fence") }.map(\.text)
            let reported = model.events.filter { $0.text.contains("invalidated") && !$0.text.contains("fence") }.map(\.text)
            // A back-fill whose reply came late (a loaded machine) is taken
            // back; Redis reports that delete, a real change: at most one
            // line per back-fill taken back, and none for those that landed.
            let takenBack = RedisProcessCounters.backfillsTakenBack.load(ordering: .relaxed) - takenBackBefore
            #expect(blamed.count <= takenBack, "\(blamed.count) lines for \(takenBack) back-fills taken back, e.g. \(blamed.prefix(3))")
            #expect(reported.count <= takenBack, "own back-fills reported: \(reported.prefix(3))")
            await server.kill()
        }
    }
}
