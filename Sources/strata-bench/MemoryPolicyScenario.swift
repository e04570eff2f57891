import Foundation
import Strata

/// The memory level's two eviction policies side by side (`--only policy`):
/// get-hit on a level holding all 10,000 keys, and evicting sets on one that
/// holds 1,000 of them, 1 and 2 threads, `.lru` runs interleaved with
/// `.adaptive` runs so machine drift hits both alike.
struct MemoryPolicyScenario {
    let options: BenchOptions
    let report: Report

    func run() {
        guard options.wants("policy") else { return }
        let count = 10_000
        let keys: [String] = (0..<count).map { "user:\($0 * 7919)" }
        let values: [Data] = (0..<count).map { Data(repeating: UInt8(truncatingIfNeeded: $0), count: 64) }
        let lru = MemoryCacheLevel<String, Data>(capacity: 1 << 30, policy: .lru)
        let adaptive = MemoryCacheLevel<String, Data>(capacity: 1 << 30, policy: .adaptive)
        for (key, value) in zip(keys, values) {
            try? lru.store(value, forKey: key)
            try? adaptive.store(value, forKey: key)
        }
        for threads in [1, 2] {
            let (l, a) = pair(threads, options.opsPerRun, { level in { thread, ops in
                var i = thread * 4093
                for _ in 0..<ops { blackHole(level.value(forKey: keys[i % count])); i &+= 1 }
            } }, lru, adaptive)
            let lruRow = report.row("memory .lru value(forKey:) hit", threads: threads, samples: l)
            report.add(lruRow)
            report.add(report.row("memory .adaptive value(forKey:) hit", threads: threads, samples: a, baseline: lruRow))
        }
        // Replacing sets (same key, a value of the same cost) on the full
        // levels: the baseline of issue #11's "an evicting set within 3x of
        // a replacing set".
        let (lr, ar) = pair(1, options.opsPerRun, { level in { thread, ops in
            var i = thread * 4093
            for _ in 0..<ops { try? level.store(values[i % count], forKey: keys[i % count]); i &+= 1 }
        } }, lru, adaptive)
        let lruReplace = report.row("memory .lru set, replacing", threads: 1, samples: lr)
        let adaptiveReplace = report.row("memory .adaptive set, replacing", threads: 1, samples: ar, baseline: lruReplace)
        report.add(lruReplace)
        report.add(adaptiveReplace)
        var evicting: [EvictionPolicy: [Int: Row]] = [:]
        for threads in [1, 2] {
            let smallLRU = MemoryCacheLevel<String, Data>(capacity: 1_000 * 64, policy: .lru)
            let smallAdaptive = MemoryCacheLevel<String, Data>(capacity: 1_000 * 64, policy: .adaptive)
            // The second thread walks the keys the other way round (see the
            // memory scenario's evicting row).
            let (l, a) = pair(threads, options.opsPerRun / 4, { level in { thread, ops in
                var i = thread * 4093
                let stride = thread == 0 ? 1 : count - 1  // the other way round
                for _ in 0..<ops { try? level.store(values[i % count], forKey: keys[i % count]); i &+= stride }
            } }, smallLRU, smallAdaptive)
            let lruRow = report.row("memory .lru set, evicting", threads: threads, samples: l)
            report.add(lruRow)
            let adaptiveRow = report.row("memory .adaptive set, evicting", threads: threads, samples: a, baseline: lruRow,
                                         note: "\(smallAdaptive.admissionsRejected) declined")
            report.add(adaptiveRow)
            evicting[.lru, default: [:]][threads] = lruRow
            evicting[.adaptive, default: [:]][threads] = adaptiveRow
        }
        // Issue #11's two speed targets for the churn path, from the rows above.
        print("targets (issue #11: medians of the rows above)")
        for (policy, replace) in [(EvictionPolicy.lru, lruReplace), (.adaptive, adaptiveReplace)] {
            guard let one = evicting[policy]?[1], let two = evicting[policy]?[2] else { continue }
            let name = policy == .lru ? ".lru" : ".adaptive"
            let perSet = one.nsPerOp / replace.nsPerOp
            let scaling = two.opsPerSecond / one.opsPerSecond
            print(pad("\(name) evicting set / replacing set", 46) + pad(String(format: "%.2f", perSet), 8)
                  + pad("<= 3.00", 10) + (perSet <= 3 ? "met" : "MISSED"))
            print(pad("\(name) evicting, 2 threads / 1 thread", 46) + pad(String(format: "%.2f", scaling), 8)
                  + pad(">= 1.00", 10) + (scaling >= 1 ? "met" : "MISSED"))
        }
    }

    typealias Body = @Sendable (Int, Int) -> Void

    func pair(
        _ threads: Int, _ ops: Int, _ body: (MemoryCacheLevel<String, Data>) -> Body,
        _ first: MemoryCacheLevel<String, Data>, _ second: MemoryCacheLevel<String, Data>
    ) -> ([Double], [Double]) {
        let a = body(first), b = body(second)
        _ = measureThreads(threads: threads, ops: ops / 10, a)
        _ = measureThreads(threads: threads, ops: ops / 10, b)
        var x: [Double] = [], y: [Double] = []
        for _ in 0..<options.runs {
            x.append(measureThreads(threads: threads, ops: ops, a))
            y.append(measureThreads(threads: threads, ops: ops, b))
        }
        return (x, y)
    }
}
