import Foundation
import Strata

/// A stack built per request (`--only compose`): `memory + shared` built and
/// asked for a hit (its coordinator, its two subscriptions), against a hit
/// through a stack built once (the README's "Build a stack once; ask it per
/// request"). 1 and 2 threads. Neither level reports changes, so releasing
/// a stack empties nothing.
struct ComposeScenario {
    let options: BenchOptions
    let report: Report

    func run() {
        guard options.wants("compose") else { return }
        let keys: [String] = (0..<1_000).map { "user:\($0)" }
        let top = MemoryCacheLevel<String, Data>(capacity: 1 << 30)
        let shared = MemoryCacheLevel<String, Data>(capacity: 1 << 30)
        for key in keys { try? top.store(Data(repeating: 1, count: 64), forKey: key) }
        let once = top + shared
        let ops = options.opsPerRun / 10
        for threads in [1, 2] {
            func run(_ body: @escaping @Sendable (Int, Int) -> Void) -> [Double] {
                _ = measureThreads(threads: threads, ops: ops / 10, body)
                return (0..<options.runs).map { _ in measureThreads(threads: threads, ops: ops, body) }
            }
            let built = run { thread, ops in
                for i in 0..<ops { blackHole((top + shared).synchronousValue(forKey: keys[(i &+ thread * 499) % 1_000])) }
            }
            let builtOnce = run { thread, ops in
                for i in 0..<ops { blackHole(once.synchronousValue(forKey: keys[(i &+ thread * 499) % 1_000])) }
            }
            let baseline = report.row("stack built per request, + hit", threads: threads, samples: built)
            report.add(baseline)
            report.add(report.row("stack built once, hit", threads: threads, samples: builtOnce, baseline: baseline))
        }
    }
}
