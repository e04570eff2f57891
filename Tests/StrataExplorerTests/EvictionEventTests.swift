import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// Issue 10, item 2: evictions and their reason are events in the log.
@Suite struct EvictionEventTests {
    @Test func evictionsAreLoggedOnceASecondWithTheirReason() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(IssueTenModelTests.spec(countLimit: 2)))
        defer { model.shutdown() }
        for key in ["a", "b", "c", "d"] { _ = await model.execute(.get(key: key)) }
        model.tick(now: .now + .seconds(2))
        let line = model.events.first { $0.text.hasPrefix("L1 evicted") }?.text
        #expect(line == "L1 evicted 2 entries (least recently used; over its capacity or count limit)",
                "\(model.events.prefix(3).map(\.text))")
        model.tick(now: .now + .seconds(4))
        #expect(model.events.filter { $0.text.hasPrefix("L1 evicted") }.count == 1, "no new evictions, no new line")
    }
}
