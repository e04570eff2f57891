import Foundation
import Synchronization

struct BenchOptions {
    var runs = 5
    var opsPerRun = 2_000_000
    var jsonPath: String? = "bench-results.json"
    var only: String?

    func wants(_ name: String) -> Bool { only.map { name.contains($0) } ?? true }
}

/// One measured row: median ns/op and ops/s over the runs, with the spread.
struct Row: Codable {
    var scenario: String
    var threads: Int
    var nsPerOp: Double
    var opsPerSecond: Double
    var minOpsPerSecond: Double
    var maxOpsPerSecond: Double
    var baseline: String?
    var ratioToBaseline: Double?
    var note: String?
}

final class Report: @unchecked Sendable {
    // Only touched from the benchmark's top-level sequential flow.
    var rows: [Row] = []
    /// Issue 12's ratio targets, when measured.
    var targets: [TargetResult] = []
    let options: BenchOptions

    struct TargetResult: Codable {
        var name: String
        var ratio: Double
        var limit: Double
        var met: Bool
    }
    let started = Date()

    init(options: BenchOptions) {
        self.options = options
        print("strata-bench  \(ProcessInfo.processInfo.activeProcessorCount) cores, \(options.runs) runs x \(options.opsPerRun) ops per thread, median [min-max]")
        print(String(repeating: "-", count: 118))
        print(pad("scenario", 46) + pad("threads", 8) + pad("ns/op", 10) + pad("ops/s", 28) + "vs baseline")
        print(String(repeating: "-", count: 118))
    }

    func add(_ row: Row) {
        rows.append(row)
        var line = pad(row.scenario, 46) + pad("\(row.threads)", 8) + pad(String(format: "%.1f", row.nsPerOp), 10)
        line += pad(String(format: "%@ [%@-%@]", human(row.opsPerSecond), human(row.minOpsPerSecond), human(row.maxOpsPerSecond)), 28)
        if let ratio = row.ratioToBaseline, let baseline = row.baseline {
            line += String(format: "%.2fx of %@", ratio, baseline)
        }
        if let note = row.note { line += "  " + note }
        print(line)
    }

    func finish() {
        print(String(repeating: "-", count: 118))
        print("ratio = time per op relative to the baseline (1.00x = as fast; lower is better)")
        guard let path = options.jsonPath else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        struct Output: Codable {
            var date: String; var cores: Int; var runs: Int; var opsPerRun: Int; var rows: [Row]; var targets: [TargetResult]
        }
        let output = Output(date: ISO8601DateFormatter().string(from: started),
                            cores: ProcessInfo.processInfo.activeProcessorCount,
                            runs: options.runs, opsPerRun: options.opsPerRun, rows: rows, targets: targets)
        if let data = try? encoder.encode(output) {
            _ = FileManager.default.createFile(atPath: path, contents: data)
            print("wrote \(path)")
        }
    }

    func row(_ name: String, threads: Int, samples: [Double], baseline: Row? = nil, note: String? = nil) -> Row {
        let sorted = samples.sorted()
        let median = sorted[sorted.count / 2]
        var row = Row(scenario: name, threads: threads, nsPerOp: 1e9 / (median / Double(threads)),
                      opsPerSecond: median, minOpsPerSecond: sorted.first!, maxOpsPerSecond: sorted.last!,
                      note: note)
        if let baseline {
            row.baseline = "\(baseline.scenario) @\(baseline.threads)"
            row.ratioToBaseline = baseline.opsPerSecond / median
        }
        return row
    }
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}

func human(_ value: Double) -> String {
    if value >= 1e6 { return String(format: "%.1fM", value / 1e6) }
    if value >= 1e3 { return String(format: "%.1fk", value / 1e3) }
    return String(format: "%.0f", value)
}

/// Runs `body(thread)` on `threads` OS threads at once; returns total ops/s.
///
/// Each thread is pinned to its own CPU while it runs (`STRATA_BENCH_NO_PIN`
/// turns this off): left alone, the scheduler kept both of two threads on one
/// CPU for a whole process now and then (3 processes in 10 of
/// `--only policy`), and every 2-thread row of that process measured half
/// its usual throughput, with either eviction policy.
func measureThreads(threads: Int, ops: Int, _ body: @escaping @Sendable (Int, Int) -> Void) -> Double {
    let pin = ProcessInfo.processInfo.environment["STRATA_BENCH_NO_PIN"] == nil
    let start = ContinuousClock.now
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
        if pin { setAffinity(cpu: thread % ProcessInfo.processInfo.activeProcessorCount) }
        body(thread, ops)
        if pin { setAffinity(cpu: nil) }
    }
    let elapsed = ContinuousClock.now - start
    return Double(threads * ops) / (Double(elapsed.nanoseconds) / 1e9)
}

/// Runs `body(worker)` as `workers` concurrent tasks; returns total ops/s.
func measureTasks(workers: Int, ops: Int, _ body: @escaping @Sendable (Int, Int) async -> Void) async -> Double {
    let start = ContinuousClock.now
    await withTaskGroup(of: Void.self) { group in
        for worker in 0..<workers { group.addTask { await body(worker, ops) } }
    }
    let elapsed = ContinuousClock.now - start
    return Double(workers * ops) / (Double(elapsed.nanoseconds) / 1e9)
}

/// A plain locked dictionary: the floor every memory cache is compared with.
final class MutexDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let storage = Mutex<[Key: Value]>([:])
    @inline(never) func get(_ key: Key) -> Value? { storage.withLock { $0[key] } }
    @inline(never) func set(_ value: Value, _ key: Key) { storage.withLock { $0[key] = value } }
    @inline(never) func asyncGet(_ key: Key) async throws -> Value {
        guard let value = storage.withLock({ $0[key] }) else { throw CancellationError() }
        return value
    }
}

/// Keeps the optimiser from dropping a result.
@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

/// Pins the calling thread to `cpu` (`nil`: every CPU again).
func setAffinity(cpu: Int?) {
    var set = cpu_set_t()
    withUnsafeMutableBytes(of: &set) { bytes in
        let words = bytes.bindMemory(to: UInt64.self)
        for i in words.indices { words[i] = cpu == nil ? ~0 : 0 }
        if let cpu { words[cpu / 64] |= 1 << UInt64(cpu % 64) }
    }
    // Glibc's module hides sched_setaffinity (a GNU extension): look it up.
    typealias SetAffinity = @convention(c) (Int32, Int, UnsafeRawPointer) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_setaffinity") else { return }
    _ = withUnsafePointer(to: &set) { unsafeBitCast(symbol, to: SetAffinity.self)(0, MemoryLayout<cpu_set_t>.size, $0) }  // 0: this thread
}
