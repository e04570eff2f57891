import Foundation
import Strata
import Synchronization

/// 100 concurrent gets of one missing key over a 50 ms origin: how many times
/// the origin runs and how long the 100 callers wait, pooled and not.
struct PoolScenario {
    let report: Report
    let options: BenchOptions

    func run() async {
        guard options.wants("pool") else { return }
        let callers = 100
        for pooled in [false, true] {
            let executions = Atomic<Int>(0)
            let origin = BasicFetcher<String, Data> { _ in
                executions.add(1, ordering: .relaxed)
                try await Task.sleep(for: .milliseconds(50))
                return Data(repeating: 1, count: 1024)
            }
            let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
            let start = ContinuousClock.now
            if pooled {
                let cache = memory + origin.pooled()
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<callers { group.addTask { _ = try? await cache.get("cold-key") } }
                }
            } else {
                let cache = memory + origin
                await withTaskGroup(of: Void.self) { group in
                    for _ in 0..<callers { group.addTask { _ = try? await cache.get("cold-key") } }
                }
            }
            let wall = ContinuousClock.now - start
            let ms = Double(wall.nanoseconds) / 1e6
            report.add(Row(scenario: pooled ? "pooled(): 100 gets, 1 cold key, 50 ms origin" : "no pooling: 100 gets, 1 cold key, 50 ms origin",
                           threads: callers, nsPerOp: Double(wall.nanoseconds), opsPerSecond: Double(callers) / (ms / 1000),
                           minOpsPerSecond: Double(callers) / (ms / 1000), maxOpsPerSecond: Double(callers) / (ms / 1000),
                           note: String(format: "origin executions: %d, wall %.1f ms", executions.load(ordering: .relaxed), ms)))
        }
    }
}
