import Foundation
@testable import Strata
import Testing

/// Statistics did not survive `normalize()`, and nothing summed up a whole
/// pipeline (#32): ``CacheLevel/levelStatistics`` finds every instrumented
/// level of a stack, through wrappers, erasure and compositions.
@Suite struct StackStatisticsTests {
    @Test func everyInstrumentedLevelIsFoundTopFirstEvenAfterNormalize() async throws {
        let l1 = MemoryCacheLevel<String, String>(capacity: 1 << 20).instrumented(name: "L1")
        let l2 = MemoryCacheLevel<String, String>(capacity: 1 << 20).pooled().instrumented(name: "L2")
        let origin = BasicFetcher<String, String> { "value of \($0)" }.instrumented(name: "origin")
        let stack = l1 + l2.normalize() + origin
        #expect(stack.levelStatistics.map(\.name) == ["L1", "L2", "origin"])
        let erased = stack.normalize()
        #expect(erased.levelStatistics.map(\.name) == ["L1", "L2", "origin"], "lost by normalize()")
        #expect(MemoryCacheLevel<String, String>(capacity: 10).levelStatistics.isEmpty)

        _ = try await erased.get("k")
        await erased.waitForPendingWrites()
        _ = try await erased.get("k")
        let summary = erased.statisticsSummary.split(separator: "\n").map(String.init)
        #expect(summary.count == 4, "\(summary)")
        #expect(summary[0].hasPrefix("level") && summary[0].contains("hit %"))
        let l1Row = summary[1].split(separator: " ").map(String.init)
        #expect(l1Row.prefix(4) == ["L1", "2", "50.0", "1"], "\(summary[1])")
        #expect(summary[3].hasPrefix("origin"))
    }
}
