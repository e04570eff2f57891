import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// Issue 10, item 2: the event log says why a level was not asked.
@Suite struct RequestPathTests {
    @Test func aLevelWhoseConditionIsOffShowsAsSkippedByCondition() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(ExplorerModelTests.quickSpec()))
        await model.withShutdown {
            _ = await model.execute(.toggle(name: "memory"))
            _ = await model.execute(.get(key: "user:7"))
            let line = model.events[0].text.withoutLatencies
            #expect(line.hasPrefix("get user:7  L1 skipped by condition → L2 miss"), "\(line)")
            _ = await model.execute(.toggle(name: "memory"))
            _ = await model.execute(.toggle(name: "disk"))
            _ = await model.execute(.get(key: "user:8"))
            let second = model.events[0].text.withoutLatencies
            #expect(second.hasPrefix("get user:8  L1 miss → L2 skipped by condition → origin hit"), "\(second)")
        }
    }

    @Test func levelsBelowTheHitAreNotSkipped() {
        let events = [CacheEvent(level: "L1", operation: .get, outcome: .hit, key: "k", duration: .microseconds(5),
                                 isBackfill: false, error: nil)]
        let path = ExplorerModel.path(events, levels: [("L1", false), ("L2", true), ("origin", false)])
        #expect(path == "L1 hit 5µs")
    }
}
