import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// Issue 10, item 2: evictions and their reason are events in the log.
@Suite struct EvictionEventTests {
    @Test func evictionsAreLoggedOnceASecondWithTheirReason() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(IssueTenModelTests.spec(countLimit: 2, policy: .lru)))
        await model.withShutdown {
            for key in ["a", "b", "c", "d"] { _ = await model.execute(.get(key: key)) }
            model.tick(now: .now + .seconds(2))
            let line = model.events.first { $0.text.hasPrefix("L1 evicted") }?.text
            #expect(line == "L1 evicted 2 entries (least recently used; over its capacity or count limit)",
                    "\(model.events.prefix(3).map(\.text))")
            model.tick(now: .now + .seconds(4))
            #expect(model.events.filter { $0.text.hasPrefix("L1 evicted") }.count == 1, "no new evictions, no new line")
        }
    }

    /// The reason follows the level's policy: an adaptive level's evictions
    /// are not least-recently-used ones.
    @Test func anAdaptiveLevelsEvictionsSayWhy() async throws {
        let spec = PipelineSpec(name: "test", levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 1 << 20, countLimit: 2), policy: .adaptive),
            LevelSpec(name: "origin", kind: .origin(latency: .zero, jitter: .zero, failureRate: 0, valueSize: 8)),
        ])
        let model = ExplorerModel(pipeline: try Pipeline(spec))
        await model.withShutdown {
            for key in ["a", "b", "c", "d", "e"] { _ = await model.execute(.get(key: key)) }
            await model.pipeline.cache.waitForPendingWrites()
            model.tick(now: .now + .seconds(2))
            let line = model.events.first { $0.text.hasPrefix("L1 evicted") }?.text
            #expect(line?.hasSuffix("(least often requested, or declined on arrival; over its capacity or count limit)") == true,
                    "\(model.events.prefix(4).map(\.text))")
        }
    }
}
