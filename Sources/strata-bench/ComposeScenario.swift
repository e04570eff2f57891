import Foundation
import Strata

/// A composition built per request (`--only compose`): `memory + shared`
/// built and asked for a hit, against the same with the shared level erased
/// (no identity: no lookup of a shared write order, see the README's
/// "Compositions can be built per request"), and a hit through a
/// composition built once. 1 and 2 threads.
struct ComposeScenario {
    let options: BenchOptions
    let report: Report

    func run() {
        guard options.wants("compose") else { return }
        let keys: [String] = (0..<1_000).map { "user:\($0)" }
        let top = MemoryCacheLevel<String, Data>(capacity: 1 << 30)
        let shared = MemoryCacheLevel<String, Data>(capacity: 1 << 30)
        for key in keys { try? top.store(Data(repeating: 1, count: 64), forKey: key) }
        let erased = shared.normalize()
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
            let builtErased = run { thread, ops in
                for i in 0..<ops { blackHole((top + erased).synchronousValue(forKey: keys[(i &+ thread * 499) % 1_000])) }
            }
            let builtOnce = run { thread, ops in
                for i in 0..<ops { blackHole(once.synchronousValue(forKey: keys[(i &+ thread * 499) % 1_000])) }
            }
            let baseline = report.row("compose per request, lower erased, + hit", threads: threads, samples: builtErased)
            report.add(baseline)
            report.add(report.row("compose per request (shared order), + hit", threads: threads, samples: built, baseline: baseline))
            report.add(report.row("composition built once, hit", threads: threads, samples: builtOnce, baseline: baseline))
        }
    }
}
