import Foundation
import Strata
import Synchronization

/// The key inspector's cost on a memory level of 10,000 entries (`--only
/// inspector`): one listing of 5,000 keys (what the explorer fetches every
/// 2 s), one ranking of the whole level's five hottest keys (also every 2 s), and get-hits on one thread while another lists without pause (the
/// worst case: the explorer lists once per 2 s), against get-hits alone.
/// Runs alternate so machine drift reaches both alike.
struct InspectorScenario {
    let options: BenchOptions
    let report: Report

    /// Calls of `body` per second, one sample per run (50 calls each).
    func callsPerSecond(_ body: () async -> Void) async -> [Double] {
        var samples: [Double] = []
        for _ in 0..<options.runs {
            let rounds = 50
            let start = ContinuousClock.now
            for _ in 0..<rounds { await body() }
            samples.append(Double(rounds) / (Double((ContinuousClock.now - start).nanoseconds) / 1e9))
        }
        return samples
    }

    func run() async {
        guard options.wants("inspector") else { return }
        let count = 10_000
        let keys: [String] = (0..<count).map { "user:\($0 * 7919)" }
        let level = MemoryCacheLevel<String, Data>(capacity: 1 << 30, policy: .adaptive)
        for key in keys { try? level.store(Data(count: 64), forKey: key) }
        guard let inspector = level.levelInspector else { return }

        let listings = await callsPerSecond { blackHole(try? await inspector.keys(5_000)) }
        report.add(report.row("memory inspector keys(5000) of 10,000", threads: 1, samples: listings))
        // A hit on every tenth key: the ranking builds a key's text only when it enters the heap.
        for key in keys.enumerated() where key.offset % 10 == 0 { blackHole(level.value(forKey: key.element)) }
        let rankings = await callsPerSecond { blackHole(try? await inspector.hotKeys(5)) }
        report.add(report.row("memory inspector hotKeys(5) of 10,000", threads: 1, samples: rankings,
                              note: "the whole level, shard by shard"))

        let gets: @Sendable (Int, Int) -> Void = { thread, ops in
            var i = thread * 4093
            for _ in 0..<ops { blackHole(level.value(forKey: keys[i % count])); i &+= 1 }
        }
        var alone: [Double] = [], listed: [Double] = []
        for _ in 0..<options.runs {
            alone.append(measureThreads(threads: 1, ops: options.opsPerRun, gets))
            let stop = Atomic<Bool>(false)
            let done = DispatchSemaphore(value: 0)
            let lister = Thread {
                while !stop.load(ordering: .relaxed) { blackHole(level.inspectKeys(limit: 5_000)) }
                done.signal()
            }
            lister.start()
            listed.append(measureThreads(threads: 1, ops: options.opsPerRun, gets))
            stop.store(true, ordering: .relaxed)
            done.wait()
        }
        let baseline = report.row("memory get-hit, 10,000 entries", threads: 1, samples: alone)
        report.add(baseline)
        report.add(report.row("memory get-hit while listing nonstop", threads: 1, samples: listed, baseline: baseline,
                              note: "another thread lists 5,000 keys in a loop"))
    }
}
