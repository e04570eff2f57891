import Foundation
import Strata
@testable import StrataExplorer
import StrataTestSupport
import Testing

/// A change another process makes to a shared level shows in the explorer:
/// the level above drops the key and the event log says so.
@Suite struct ExplorerInvalidationTests {
    @Test func anotherProcessWritingTheSharedDiskShowsInTheLogAndDropsTheKeyAbove() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let spec = PipelineSpec(name: "shared", levels: [
            LevelSpec(name: "L1", kind: .memory(capacity: 1 << 20, countLimit: 100)),
            LevelSpec(name: "L2", kind: .disk(path: dir.path, capacity: 1 << 20)),
            LevelSpec(name: "origin", kind: .origin(latency: .zero, jitter: .zero, failureRate: 0, valueSize: 16)),
        ])
        let model = ExplorerModel(pipeline: try Pipeline(spec))
        try await model.withShutdown {
            #expect(await model.execute(.set(key: "user:7", value: "mine")).isError == false)
            #expect(model.panes()[0].entries == 1)
            // Another process's disk level on the same directory (same name, so the same files).
            let other = try DiskCacheLevel<String, Data>(name: "L2", directory: dir.url, capacity: 1 << 20)
            try await other.set(Data("theirs".utf8), forKey: "user:7")
            #expect(await Self.poll { model.panes()[0].entries == 0 }, "L1 kept the value another process replaced")
            #expect(await Self.poll { model.events.contains { $0.text == "invalidated user:7 (by another client, via L2)" } })
            #expect(await model.execute(.get(key: "user:7")).message.hasSuffix("\"theirs\""))
        }
    }

    /// Polls `condition` until it holds or 10 s pass (the change arrives from
    /// the kernel's file events: there is nothing to await).
    static func poll(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }
}
