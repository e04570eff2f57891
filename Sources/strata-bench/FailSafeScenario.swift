import Foundation
import Strata

/// What fail-safe costs on the hit path (`--only failsafe`): a get that
/// memory answers through `memory + origin`, plain, then wrapped in
/// `failSafe(maxStale:)` (each answer recorded as the last known value),
/// then with timeouts too. 1 and 2 tasks; the plain stack is the baseline.
struct FailSafeScenario {
    let options: BenchOptions
    let report: Report

    func run() async {
        guard options.wants("failsafe") else { return }
        let keys: [String] = (0..<1_000).map { "user:\($0)" }
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 30)
        let origin = BasicFetcher<String, Data> { _ in Data(repeating: 1, count: 64) }
        for key in keys { try? memory.store(Data(repeating: 1, count: 64), forKey: key) }
        let stack = memory + origin
        let failSafe = stack.failSafe(maxStale: .seconds(3600))
        let timed = stack.failSafe(maxStale: .seconds(3600), softTimeout: .milliseconds(50), hardTimeout: .seconds(2))
        let ops = options.opsPerRun / 10
        for workers in [1, 2] {
            func run(_ body: @escaping @Sendable (Int, Int) async -> Void) async -> [Double] {
                _ = await measureTasks(workers: workers, ops: ops / 10, body)
                var samples: [Double] = []
                for _ in 0..<options.runs { samples.append(await measureTasks(workers: workers, ops: ops, body)) }
                return samples
            }
            let plain = await run { worker, ops in
                for i in 0..<ops { blackHole(try? await stack.get(keys[(i &+ worker * 499) % 1_000])) }
            }
            let safe = await run { worker, ops in
                for i in 0..<ops { blackHole(try? await failSafe.get(keys[(i &+ worker * 499) % 1_000])) }
            }
            let withTimeouts = await run { worker, ops in
                for i in 0..<ops { blackHole(try? await timed.get(keys[(i &+ worker * 499) % 1_000])) }
            }
            let baseline = report.row("memory + origin, hit", threads: workers, samples: plain)
            report.add(baseline)
            report.add(report.row("  .failSafe(maxStale:), hit", threads: workers, samples: safe, baseline: baseline))
            report.add(report.row("  .failSafe(+ soft/hard timeouts), hit", threads: workers, samples: withTimeouts, baseline: baseline))
        }
    }
}
