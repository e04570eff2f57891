import Foundation
import Strata
@testable import StrataExplorer
import Testing

/// Issue 10, item 2: workload gets are sampled into the event log (one in N,
/// adjustable with `sample N`), so the log stays readable under load.
@Suite struct WorkloadSamplingTests {
    static func model() throws -> ExplorerModel {
        ExplorerModel(pipeline: try Pipeline(IssueTenModelTests.spec()))
    }

    static func waitForGets(_ model: ExplorerModel, _ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while (model.workload?.completed ?? 0) < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test func oneGetInNIsLoggedWithItsPath() async throws {
        let model = try Self.model()
        try await model.withShutdown {
            #expect(try CommandParser.parse("sample 5") == .sample(5))
            #expect(await model.execute(.sample(5)).message == "logging one workload get in 5")
            _ = await model.execute(.load(pattern: .loop, keys: 1000, rate: 400, seconds: nil))
            try await Self.waitForGets(model, 60)
            _ = await model.execute(.loadStop)
            let sampled = model.events.filter { $0.text.hasPrefix("load get key:") }
            #expect(sampled.count >= 10, "\(sampled.count) sampled lines")
            #expect(sampled.allSatisfy { $0.text.contains("L1 miss") && $0.text.contains("origin hit") }, "\(sampled.map(\.text))")
            // loop keys are requested in order, so the sampled ones are multiples of 5.
            let indexes = sampled.compactMap { Int($0.text.dropFirst("load get key:".count).prefix { $0.isNumber }) }
            #expect(indexes.allSatisfy { $0 % 5 == 0 }, "\(indexes)")
        }
    }

    @Test func byDefaultAboutTwoGetsASecondAreLogged() async throws {
        let model = try Self.model()
        try await model.withShutdown {
            // 400 gets/s: auto logs one in 200, so requests 0, 200, 400, … .
            _ = await model.execute(.load(pattern: .loop, keys: 100_000, rate: 400, seconds: nil))
            try await Self.waitForGets(model, 450)
            _ = await model.execute(.loadStop)
            let indexes = model.events.filter { $0.text.hasPrefix("load get key:") }
                .compactMap { Int($0.text.dropFirst("load get key:".count).prefix { $0.isNumber }) }
            #expect(indexes.count >= 2 && indexes.count <= 4 && indexes.allSatisfy { $0 % 200 == 0 }, "\(indexes)")
        }
    }

    @Test func sampleZeroLogsNoWorkloadGets() async throws {
        let model = try Self.model()
        try await model.withShutdown {
            #expect(model.sampleEvery == ExplorerModel.autoSampling)
            #expect(try CommandParser.parse("sample auto") == .sample(ExplorerModel.autoSampling))
            _ = await model.execute(.sample(0))
            _ = await model.execute(.load(pattern: .loop, keys: 1000, rate: 400, seconds: nil))
            try await Self.waitForGets(model, 60)
            _ = await model.execute(.loadStop)
            #expect(!model.events.contains { $0.text.hasPrefix("load get") })
        }
    }
}
