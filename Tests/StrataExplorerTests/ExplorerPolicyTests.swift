import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// A pipeline file chooses a memory or disk level's eviction policy; the pane names it
/// and shows an adaptive level's window share and declined sets.
@Suite struct ExplorerPolicyTests {
    static let file = """
    name: policies
    levels:
      - name: L1
        kind: memory
        capacity: 4KiB
        policy: adaptive
      - name: L2
        kind: memory
        capacity: 64KiB
        policy: lru
      - name: disk
        kind: disk
        capacity: 4KiB
        policy: adaptive
      - name: origin
        kind: origin
        latency: 0ms
        value-size: 100
    """

    @Test func aPipelineFileChoosesThePolicyAndThePaneShowsIt() async throws {
        let spec = try PipelineFile.parse(Self.file, file: "policies.yaml")
        #expect(spec.levels.map(\.policy) == [.adaptive, .lru, .adaptive, nil])
        let model = ExplorerModel(pipeline: try Pipeline(spec))
        await model.withShutdown {
            // More distinct keys than L1 holds, so admission has to decide.
            for i in 0..<200 { _ = await model.execute(.get(key: "k\(i % 120)")) }
            let panes = model.panes()
            #expect(panes[0].summary.hasPrefix("memory · adaptive"))
            #expect(panes[1].summary.hasPrefix("memory · lru"))
            #expect(panes[0].configuration.contains("window ") && panes[0].configuration.contains("declined "),
                    "L1: \(panes[0].configuration)")
            #expect(!panes[1].configuration.contains("declined"))
            #expect(panes[2].summary.hasPrefix("disk · adaptive"), "\(panes[2].summary)")
            #expect(panes[2].configuration.contains("window ") && panes[2].configuration.contains("declined "),
                    "disk: \(panes[2].configuration)")
        }
    }

    @Test func anUnknownPolicyIsAnErrorNamingFileAndLine() {
        let bad = Self.file.replacingOccurrences(of: "policy: lru", with: "policy: fifo")
        #expect {
            try PipelineFile.parse(bad, file: "policies.yaml")
        } throws: { error in
            "\(error)".contains("policies.yaml:10") && "\(error)".contains("expected lru or adaptive, got \"fifo\"")
        }
    }

    /// A `:set` that a full adaptive level declines says so (the set itself succeeded).
    @Test func aDeclinedSetIsNamedInTheLog() async throws {
        let model = ExplorerModel(pipeline: try Pipeline(try PipelineFile.parse(Self.file, file: "policies.yaml")))
        await model.withShutdown {
            // Five rounds: the sketch's estimates depend on the per-process hash
            // seed, and with three a collision let the newcomer in about one
            // process in ten.
            for _ in 0..<5 {
                for i in 0..<40 { _ = await model.execute(.get(key: "k\(i)")) }
                await model.pipeline.cache.waitForPendingWrites()
            }
            let outcome = await model.execute(.set(key: "newcomer", value: String(repeating: "x", count: 100)))
            #expect(outcome.message.hasPrefix("set newcomer: 100 bytes written (declined by L1"), "\(outcome.message)")
            #expect(model.events.contains { $0.text.contains("→ written to every level (declined by L1") })
        }
    }
}
