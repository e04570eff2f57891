import Foundation
import Strata

/// Memory level get-hit and set, 1 and 2 threads, next to a `Mutex<[String: Data]>`.
struct MemoryScenarios {
    let options: BenchOptions
    let report: Report
    static let keyCount = 10_000
    let keys: [String] = (0..<Self.keyCount).map { "user:\($0 * 7919)" }
    let value = Data(repeating: 42, count: 64)
    /// One value object per key: a shared instance would make every read of
    /// every thread bump one reference count and measure that instead.
    let values: [Data] = (0..<Self.keyCount).map { Data(repeating: UInt8(truncatingIfNeeded: $0), count: 64) }

    func run() async {
        let keys = self.keys, value = self.value, values = self.values, count = Self.keyCount
        let mask = count  // keys are walked modulo count

        let baseline = MutexDictionary<String, Data>()
        for (key, value) in zip(keys, values) { baseline.set(value, key) }
        // `.lru`: these rows track the LRU paths the README describes; the
        // policy scenario compares both policies.
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 30, policy: .lru)
        for (key, value) in zip(keys, values) { try? memory.store(value, forKey: key) }

        for threads in [1, 2] where options.wants("get") {
            let (base, sync) = samplePair(threads, baseline: { thread, ops in
                var i = thread * 4093
                for _ in 0..<ops { blackHole(baseline.get(keys[i % mask])); i &+= 1 }
            }, candidate: { thread, ops in
                var i = thread * 4093
                for _ in 0..<ops { blackHole(memory.value(forKey: keys[i % mask])); i &+= 1 }
            })
            let baseRow = report.row("baseline Mutex<[String: Data]> get", threads: threads, samples: base)
            report.add(baseRow)
            report.add(report.row("MemoryCacheLevel value(forKey:) hit", threads: threads, samples: sync, baseline: baseRow))

            let (asyncBase, asyncGet) = await samplePairAsync(threads, baseline: { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await baseline.asyncGet(keys[i % mask])); i &+= 1 }
            }, candidate: { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await memory.get(keys[i % mask])); i &+= 1 }
            })
            let asyncBaseRow = report.row("baseline Mutex<[String: Data]> async get", threads: threads, samples: asyncBase)
            report.add(asyncBaseRow)
            report.add(report.row("MemoryCacheLevel get (async) hit", threads: threads, samples: asyncGet, baseline: asyncBaseRow))
        }

        for threads in [1, 2] where options.wants("set") {
            let (base, sets) = samplePair(threads, baseline: { thread, ops in
                var i = thread * 4093
                for _ in 0..<ops { baseline.set(values[i % mask], keys[i % mask]); i &+= 1 }
            }, candidate: { thread, ops in
                var i = thread * 4093
                for _ in 0..<ops { try? memory.store(values[i % mask], forKey: keys[i % mask]); i &+= 1 }
            })
            let baseRow = report.row("baseline Mutex<[String: Data]> set", threads: threads, samples: base)
            report.add(baseRow)
            report.add(report.row("MemoryCacheLevel set (replace)", threads: threads, samples: sets, baseline: baseRow))
        }

        if options.wants("evict") {
            // Capacity for 1,000 of the 10,000 keys: nearly every set evicts.
            // Each key has its own value, as in use: with one value object
            // for every key, both threads write its reference count on every
            // set and every eviction, and 2 threads ran at a third of 1.
            let small = MemoryCacheLevel<String, Data>(capacity: 1_000 * value.count, policy: .lru)
            for threads in [1, 2] {
                // The second thread walks the keys the other way round: with the
                // same walk, the threads drifted into step on the same keys
                // (one shard lock, one entry) in some runs and not in others.
                let evicting = sample(threads, ops: options.opsPerRun / 4) { thread, ops in
                    var i = thread * 4093
                    let stride = thread == 0 ? 1 : mask - 1  // the other way round
                    for _ in 0..<ops { try? small.store(values[i % mask], forKey: keys[i % mask]); i &+= stride }
                }
                report.add(report.row("MemoryCacheLevel set, evicting", threads: threads, samples: evicting,
                                      note: "\(small.evictions) evictions"))
            }
        }

        if options.wants("composed") {
            let l2 = MemoryCacheLevel<String, Data>(capacity: 1 << 30)
            let l3 = BasicFetcher<String, Data> { _ in Data() }
            let composed = memory + l2 + l3
            let (single, samples) = await samplePairAsync(1, baseline: { _, ops in
                var i = 0
                for _ in 0..<ops { blackHole(try? await memory.get(keys[i % mask])); i &+= 1 }
            }, candidate: { _, ops in
                var i = 0
                for _ in 0..<ops { blackHole(try? await composed.get(keys[i % mask])); i &+= 1 }
            })
            let singleRow = report.row("MemoryCacheLevel get (async) hit", threads: 1, samples: single)
            report.add(report.row("3-level composed get, hit on top", threads: 1, samples: samples, baseline: singleRow))
            let instrumented = memory.instrumented(name: "L1") + l2 + l3
            let traced = await sampleAsync(1) { _, ops in
                var i = 0
                for _ in 0..<ops { blackHole(try? await instrumented.get(keys[i % mask])); i &+= 1 }
            }
            report.add(report.row("same, top level instrumented", threads: 1, samples: traced, baseline: singleRow))
        }
    }

    /// Alternates baseline and candidate runs so drift on a shared VM hits both alike.
    func samplePair(_ threads: Int, baseline: @escaping @Sendable (Int, Int) -> Void,
                    candidate: @escaping @Sendable (Int, Int) -> Void) -> ([Double], [Double]) {
        let ops = options.opsPerRun
        _ = measureThreads(threads: threads, ops: ops / 10, baseline)
        _ = measureThreads(threads: threads, ops: ops / 10, candidate)
        var a: [Double] = [], b: [Double] = []
        for _ in 0..<options.runs {
            a.append(measureThreads(threads: threads, ops: ops, baseline))
            b.append(measureThreads(threads: threads, ops: ops, candidate))
        }
        return (a, b)
    }

    func samplePairAsync(_ workers: Int, baseline: @escaping @Sendable (Int, Int) async -> Void,
                         candidate: @escaping @Sendable (Int, Int) async -> Void) async -> ([Double], [Double]) {
        let ops = options.opsPerRun
        _ = await measureTasks(workers: workers, ops: ops / 10, baseline)
        _ = await measureTasks(workers: workers, ops: ops / 10, candidate)
        var a: [Double] = [], b: [Double] = []
        for _ in 0..<options.runs {
            a.append(await measureTasks(workers: workers, ops: ops, baseline))
            b.append(await measureTasks(workers: workers, ops: ops, candidate))
        }
        return (a, b)
    }

    func sample(_ threads: Int, ops: Int? = nil, _ body: @escaping @Sendable (Int, Int) -> Void) -> [Double] {
        let ops = ops ?? options.opsPerRun
        _ = measureThreads(threads: threads, ops: ops / 10, body)  // warm-up
        return (0..<options.runs).map { _ in measureThreads(threads: threads, ops: ops, body) }
    }

    func sampleAsync(_ workers: Int, _ body: @escaping @Sendable (Int, Int) async -> Void) async -> [Double] {
        _ = await measureTasks(workers: workers, ops: options.opsPerRun / 10, body)
        var samples: [Double] = []
        for _ in 0..<options.runs { samples.append(await measureTasks(workers: workers, ops: options.opsPerRun, body)) }
        return samples
    }
}
