import Foundation
import Prometheus
import Strata
import StrataMetrics

/// Reaches a level through an unspecialised generic function, as code in
/// another module that takes `some CacheLevel` without inlining would.
@_semantics("optimize.sil.specialize.generic.never")
@inline(never)
func unspecialisedGet<L: CacheLevel>(_ level: L, _ key: L.Key) async throws -> L.Value? {
    try await level.getIfPresent(key)
}

/// The same generic function, left for the optimiser to specialise: what the
/// unspecialised one is measured against, since both pay for the caller's
/// own async call (a task-allocated frame and the hop back after it) that an
/// inlined concrete `get` does not.
@inline(never)
func specialisedGet<L: CacheLevel>(_ level: L, _ key: L.Key) async throws -> L.Value? {
    try await level.getIfPresent(key)
}

/// Hides the concrete type from the loop that uses the existential.
@inline(never)
func eraseToExistential(_ level: MemoryCacheLevel<String, Data>) -> any CacheLevel<String, Data> { level }

/// Get-hit paths of issue 12, each next to its target, measured in this
/// module (not Strata's), interleaved run by run: the floor (an `async`
/// `Mutex<[String: Data]>` look-up), the memory level concretely, erased
/// three ways, instrumented, and in a three-level composition.
struct TargetScenarios {
    let options: BenchOptions
    let report: Report

    struct Target {
        var name: String
        var ratio: Double
        var limit: Double
        var atMost: Bool
        var detail: String = ""
        var met: Bool { atMost ? ratio <= limit : ratio >= limit }
    }

    func run() async {
        guard options.wants("get") || options.wants("target") else { return }
        let count = MemoryScenarios.keyCount
        let keys: [String] = (0..<count).map { "user:\($0 * 7919)" }
        let values: [Data] = (0..<count).map { Data(repeating: UInt8(truncatingIfNeeded: $0), count: 64) }
        let floor = MutexDictionary<String, Data>()
        func filled() -> MemoryCacheLevel<String, Data> {
            let level = MemoryCacheLevel<String, Data>(capacity: 1 << 30)
            for (key, value) in zip(keys, values) { try? level.store(value, forKey: key) }
            return level
        }
        for (key, value) in zip(keys, values) { floor.set(value, key) }
        let memory = filled()
        let existential = eraseToExistential(memory)
        let normalized = memory.normalize()
        let instrumented = memory.instrumented(name: "L1")
        let composed = memory + filled() + filled()
        let composedErased = (memory + filled() + filled()).normalize()
        // The same instrumented level reported to Prometheus through
        // swift-metrics every 100 ms while every row runs (#34: what
        // exporting costs a hit is what the level's counting does).
        let exported = memory.instrumented(name: "exported")
        let exporter = StrataMetricsExporter(levels: [.init(exported.statistics)], factory: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
        let exporting = Task { await exporter.run(every: .milliseconds(100)) }
        defer { exporting.cancel() }

        typealias Body = @Sendable (Int, Int) async -> Void
        let variants: [(String, Body)] = [
            ("floor: async Mutex<[String: Data]> get", { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await floor.asyncGet(keys[i % count])); i &+= 1 }
            }),
            ("MemoryCacheLevel get, concrete", { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await memory.get(keys[i % count])); i &+= 1 }
            }),
            ("memory as any CacheLevel<String, Data>", { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await existential.get(keys[i % count])); i &+= 1 }
            }),
            ("memory.normalize()", { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await normalized.get(keys[i % count])); i &+= 1 }
            }),
            ("memory via the same generic func, specialised", { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await specialisedGet(memory, keys[i % count])); i &+= 1 }
            }),
            ("memory via unspecialised generic func", { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await unspecialisedGet(memory, keys[i % count])); i &+= 1 }
            }),
            ("memory.instrumented(name:)", { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await instrumented.get(keys[i % count])); i &+= 1 }
            }),
            ("memory + memory + memory, hit on top", { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await composed.get(keys[i % count])); i &+= 1 }
            }),
            ("(memory + memory + memory).normalize()", { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await composedErased.get(keys[i % count])); i &+= 1 }
            }),
            ("instrumented, exported to Prometheus", { worker, ops in
                var i = worker * 4093
                for _ in 0..<ops { blackHole(try? await exported.get(keys[i % count])); i &+= 1 }
            }),
        ]
        let ops = options.opsPerRun
        for (_, body) in variants { _ = await measureNonisolated(workers: 1, ops: ops / 10, body) }
        var samples = [[Double]](repeating: [], count: variants.count)
        for _ in 0..<options.runs {
            for (index, variant) in variants.enumerated() {
                samples[index].append(await measureNonisolated(workers: 1, ops: ops, variant.1))
            }
        }
        var rows: [Row] = []
        for (index, variant) in variants.enumerated() {
            // The floor for itself, concrete and compositions; the concrete
            // level for the erased ones; the specialised generic function
            // for the unspecialised one.
            let baseline = index == 0 ? nil : (index == 1 || index == 7 || index == 8 ? rows[0] : (index == 5 ? rows[4] : rows[1]))
            let row = report.row(variant.0, threads: 1, samples: samples[index], baseline: baseline)
            rows.append(row)
            report.add(row)
        }

        // Two tasks against one, paired run by run.
        let hit: Body = { worker, ops in
            var i = worker * 4093
            for _ in 0..<ops { blackHole(try? await memory.get(keys[i % count])); i &+= 1 }
        }
        _ = await measureNonisolated(workers: 2, ops: ops / 10, hit)
        // Each run alternates three short 1-thread and 2-thread measurements
        // and keeps the median of each, so that one stall of this VM's vCPUs
        // (which has pushed single pairs to 0.6x and to 2.4x, past what two
        // threads can do) does not decide a run; a line both threads write
        // would slow every measurement of the run alike.
        // Each run also measures the cache-line round trip between the two
        // CPUs before and after (see `cacheLineRoundTrip`): the target is
        // judged on the runs in which they were near.
        var one: [Double] = [], two: [Double] = [], roundTrips: [Double] = []
        for _ in 0..<options.runs {
            let before = cacheLineRoundTrip()
            var ones: [Double] = [], twos: [Double] = []
            for _ in 0..<3 {
                ones.append(await measureNonisolated(workers: 1, ops: ops / 3, hit))
                twos.append(await measureNonisolated(workers: 2, ops: ops / 3, hit))
            }
            one.append(ones.sorted()[1])
            two.append(twos.sorted()[1])
            roundTrips.append(max(before, cacheLineRoundTrip()))
        }
        let scaling = zip(two, one).map { $0 / $1 }
        let nearScaling = scaling.indices.filter { roundTrips[$0] <= nearRoundTrip }.map { scaling[$0] }
        let farScaling = scaling.indices.filter { roundTrips[$0] > nearRoundTrip }.map { scaling[$0] }
        let oneRow = report.row("MemoryCacheLevel get, concrete (paired)", threads: 1, samples: one)
        report.add(oneRow)
        report.add(report.row("MemoryCacheLevel get, concrete (paired)", threads: 2, samples: two,
                              note: "2-thread/1-thread per run " + zip(scaling, roundTrips).map {
                                  String(format: "%.2f (%.0f ns)", $0, $1) }.joined(separator: " ")))

        func ratio(_ index: Int, _ base: Int) -> Double { rows[base].opsPerSecond / rows[index].opsPerSecond }
        let targets = [
            Target(name: "erased (any CacheLevel) / concrete", ratio: ratio(2, 1), limit: 1.3, atMost: true),
            Target(name: "erased (normalize()) / concrete", ratio: ratio(3, 1), limit: 1.3, atMost: true),
            Target(name: "unspecialised / specialised generic func", ratio: ratio(5, 4), limit: 1.3, atMost: true,
                   detail: String(format: "(%.2f of a concrete get, which pays no call)", ratio(5, 1))),
            Target(name: "instrumented / bare", ratio: ratio(6, 1), limit: 1.25, atMost: true),
            Target(name: "exported to metrics / bare", ratio: ratio(9, 1), limit: 1.25, atMost: true),
            Target(name: "3-level concrete / floor", ratio: ratio(7, 0), limit: 2.0, atMost: true),
            Target(name: "3-level erased / floor", ratio: ratio(8, 0), limit: 2.6, atMost: true),
            Target(name: "memory get-hit / floor", ratio: ratio(1, 0), limit: 1.5, atMost: true),
            Target(name: "2-thread / 1-thread, worst of \(nearScaling.count) near runs", ratio: nearScaling.min() ?? 0,
                   limit: 1.0, atMost: false,
                   detail: (nearScaling.isEmpty ? "no near run, not judged; " : "")
                       + String(format: "all runs %.2f-%.2f", scaling.min() ?? 0, scaling.max() ?? 0)
                       + (farScaling.isEmpty ? "" : String(format: "; %d far (CPUs over %.0f ns apart): %.2f-%.2f",
                                                             farScaling.count, nearRoundTrip, farScaling.min()!, farScaling.max()!))),
        ]
        print("targets (time per get-hit; ratios of medians over \(options.runs) interleaved runs)")
        for target in targets {
            print(pad(target.name, 46) + pad(String(format: "%.2f", target.ratio), 8)
                  + pad((target.atMost ? "<= " : ">= ") + String(format: "%.2f", target.limit), 10)
                  + pad(target.met ? "met" : "MISSED", 8) + target.detail)
        }
        report.targets = targets.map { Report.TargetResult(name: $0.name, ratio: $0.ratio, limit: $0.limit, met: $0.met) }
    }
}

/// Runs `body(worker)` as `workers` child tasks on the global executor
/// (non-isolated, as a server's handlers); returns total ops/s.
@concurrent
func measureNonisolated(workers: Int, ops: Int, _ body: @escaping @Sendable (Int, Int) async -> Void) async -> Double {
    let start = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
        for worker in 0..<workers { group.addTask { @concurrent in await body(worker, ops) } }
    }
    let elapsed = ContinuousClock.now - start
    return Double(workers * ops) / (Double(elapsed.nanoseconds) / 1e9)
}
