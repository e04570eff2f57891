import Foundation
import Strata
import StrataRedis
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// RedisCacheLevel get/set on one connection, sequential (latency) and
/// pipelined (throughput), next to `redis-benchmark` against the same
/// loopback server in the same run. Starts its own redis-server.
///
/// The loops run off the main actor (`@concurrent`), where a server's request
/// handlers run: each reply resumes the waiting task on the global executor.
/// One more row repeats the sequential get from the main actor, whose every
/// resumption is one more thread hop (the main queue's).
struct RedisScenario {
    let report: Report
    let options: BenchOptions

    @concurrent func run() async throws {
        // `--only redis` runs both parts; `--only redis-sequential` or
        // `--only redis-pipelined` one (for profiling).
        let sequentialPart = options.wants("redis-sequential"), pipelinedPart = options.wants("redis-pipelined")
        guard sequentialPart || pipelinedPart else { return }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-benchmark") else {
            print("redis: skipped (redis-server / redis-benchmark not installed; `make setup` installs them)")
            return
        }
        let port = 20000 + Int(getpid() % 20000)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        server.arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        server.standardOutput = FileHandle.nullDevice
        try server.run()
        defer { kill(server.processIdentifier, SIGKILL) }
        let level = try RedisCacheLevel<String, Data>(url: "redis://127.0.0.1:\(port)", prefix: "bench:", connections: 1)
        for _ in 0..<100 where (try? await level.ping()) == nil { try await Task.sleep(for: .milliseconds(20)) }
        let value = Data(repeating: 0x61, count: 3)  // redis-benchmark's default payload is 3 bytes
        let ops = max(10_000, options.opsPerRun / 40)

        if sequentialPart { try await sequentialRows(level, value: value, ops: ops, port: port) }
        if pipelinedPart { await pipelinedRows(level, ops: ops, port: port) }
        if sequentialPart {
            let delay = try await invalidationDelay(url: "redis://127.0.0.1:\(port)")
            report.add(Row(scenario: "near-cache invalidation delay, 2 clients", threads: 1, nsPerOp: Double(delay.p50),
                           opsPerSecond: 1e9 / Double(max(1, delay.p50)), minOpsPerSecond: 0, maxOpsPerSecond: 0,
                           baseline: nil, ratioToBaseline: nil,
                           note: "set by one level → heard by another: p50 \(fmt(delay.p50)) p99 \(fmt(delay.p99))"))
            let window = try await cachelessWindow(url: "redis://127.0.0.1:\(port)")
            report.add(Row(scenario: "after a remove: hot key, 8 callers, 1 s", threads: 8, nsPerOp: 0,
                           opsPerSecond: Double(window.gets), minOpsPerSecond: 0, maxOpsPerSecond: 0,
                           baseline: nil, ratioToBaseline: nil,
                           note: "origin loads \(window.loads) (1 = none lost to the remove); first cached after \(fmt(UInt64(max(0, window.cachedAfter))))"))
        }
        await level.shutdown()
    }

    /// `memory + redis` with a 1 ms loader: the key is removed, then 8 callers
    /// get it for 1 s. Back-fills of reads that began before the remove are
    /// declined (tombstones, compared with the server time of each read's
    /// miss); once one read that began after it lands, gets hit again.
    private func cachelessWindow(url: String) async throws -> (loads: Int, gets: Int, cachedAfter: Int64) {
        let redis = try RedisCacheLevel<String, Data>(url: url, prefix: "window:", connections: 2)
        let stack = MemoryCacheLevel<String, Data>(capacity: 1 << 20) + redis
        final class Counts: Sendable {
            let loads = Atomic<Int>(0), gets = Atomic<Int>(0), cachedAt = Atomic<Int64>(0)
        }
        let counts = Counts()
        let load: @Sendable (String) async throws -> Data = { _ in
            counts.loads.add(1, ordering: .relaxed)
            try await Task.sleep(for: .milliseconds(1))
            return Data(repeating: 1, count: 64)
        }
        _ = try await stack.get("hot", ttl: .seconds(60), load: load)
        await stack.waitForPendingWrites()
        try await stack.remove("hot")
        counts.loads.store(0, ordering: .relaxed)
        let start = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    while ContinuousClock.now - start < .seconds(1) {
                        _ = try? await stack.get("hot", ttl: .seconds(60), load: load)
                        counts.gets.add(1, ordering: .relaxed)
                        if counts.cachedAt.load(ordering: .relaxed) == 0, stack.upper.contains("hot") {
                            _ = counts.cachedAt.compareExchange(expected: 0, desired: (ContinuousClock.now - start).nanoseconds,
                                                         ordering: .relaxed)
                        }
                    }
                }
            }
        }
        await redis.shutdown()
        return (counts.loads.load(ordering: .relaxed), counts.gets.load(ordering: .relaxed), counts.cachedAt.load(ordering: .relaxed))
    }

    /// Latency: one request at a time.
    private func sequentialRows(_ level: RedisCacheLevel<String, Data>, value: Data, ops: Int, port: Int) async throws {
        let setRun = await Self.measure(ops: ops) { latency in
            for i in 0..<ops {
                let t0 = ContinuousClock.now
                try? await level.set(value, forKey: "k\(i % 1000)")
                latency.record(ContinuousClock.now - t0)
            }
        }
        // A deadline goes as SET … PXAT on the server's clock (a lower bound learned from TIME).
        let ttlSetRun = await Self.measure(ops: ops) { latency in
            for i in 0..<ops {
                let t0 = ContinuousClock.now
                try? await level.set(value, forKey: "t\(i % 1000)", ttl: .seconds(300))
                latency.record(ContinuousClock.now - t0)
            }
        }
        let sequentialGets: @Sendable (LatencyHistogram) async -> Void = { latency in
            for i in 0..<ops {
                let t0 = ContinuousClock.now
                _ = try? await level.getIfPresent("k\(i % 1000)")
                latency.record(ContinuousClock.now - t0)
            }
        }
        let getRun = await Self.measure(ops: ops, sequentialGets)
        let getOnLoopRun = await Self.measure(ops: ops, on: level.taskExecutor, sequentialGets)
        let mainActorRun = await Self.measure(ops: ops) { _ in await Self.sequentialGetsOnTheMainActor(level, ops: ops) }
        let sequential = redisBenchmark(port: port, requests: ops, pipeline: 1)
        if let get = sequential["GET"] { report.add(baselineRow("baseline redis-benchmark GET -c 1", get)) }
        report.add(row("RedisCacheLevel get, 1 conn, sequential", getRun, baseline: sequential["GET"], note: "target ≤ 2.0x"))
        report.add(row("same, on level.taskExecutor", getOnLoopRun, baseline: sequential["GET"], note: "no thread switch"))
        report.add(row("same, from the main actor", mainActorRun, baseline: sequential["GET"], note: "one more hop per reply"))
        if let set = sequential["SET"] { report.add(baselineRow("baseline redis-benchmark SET -c 1", set)) }
        report.add(row("RedisCacheLevel set, 1 conn, sequential", setRun, baseline: sequential["SET"]))
        report.add(row("same, with a TTL", ttlSetRun, baseline: sequential["SET"], note: "SET … PXAT on the server's clock"))
    }

    /// Throughput: 16 requests in flight on the one connection (pipelined).
    private func pipelinedRows(_ level: RedisCacheLevel<String, Data>, ops: Int, port: Int) async {
        let inFlight = ops / 16 * 16
        let pipelinedGets: @Sendable (LatencyHistogram) async -> Void = { _ in
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        for i in 0..<(ops / 16) { _ = try? await level.getIfPresent("k\((i * 16 + worker) % 1000)") }
                    }
                }
            }
        }
        // Five runs of each, interleaved; the rows give the median and min–max.
        var pipelinedRuns: [Run] = [], pipelinedOnLoopRuns: [Run] = []
        for _ in 0..<5 {
            pipelinedRuns.append(await Self.measure(ops: inFlight, pipelinedGets))
            pipelinedOnLoopRuns.append(await Self.measure(ops: inFlight, on: level.taskExecutor, pipelinedGets))
        }
        let pipelinedRun = Run.median(pipelinedRuns), pipelinedOnLoopRun = Run.median(pipelinedOnLoopRuns)

        let pipelined = redisBenchmark(port: port, requests: ops * 2, pipeline: 16)
        if let get = pipelined["GET"] { report.add(baselineRow("baseline redis-benchmark GET -c 1 -P 16", get)) }
        report.add(row("RedisCacheLevel get, 1 conn, 16 in flight", pipelinedRun, baseline: pipelined["GET"],
                       note: "target ≤ 2.0x (≥ 50%)"))
        report.add(row("same, on level.taskExecutor", pipelinedOnLoopRun, baseline: pipelined["GET"],
                       note: "target ≤ 2.0x (≥ 50%)"))
    }

    func row(_ name: String, _ run: Run, baseline: Double?, note: String = "") -> Row {
        var notes = ["CPU \(String(format: "%.1f", run.cpuMicrosecondsPerOp))µs/op"]
        if let p50 = run.latency.percentile(0.5), let p99 = run.latency.percentile(0.99) { notes.append("p50 \(fmt(p50)) p99 \(fmt(p99))") }
        if !note.isEmpty { notes.append(note) }
        return Row(scenario: name, threads: 1, nsPerOp: 1e9 / run.opsPerSecond, opsPerSecond: run.opsPerSecond,
                   minOpsPerSecond: run.minOpsPerSecond, maxOpsPerSecond: run.maxOpsPerSecond,
                   baseline: baseline == nil ? nil : "redis-benchmark",
                   ratioToBaseline: baseline.map { $0 / run.opsPerSecond }, note: notes.joined(separator: "  "))
    }

    func baselineRow(_ name: String, _ opsPerSecond: Double) -> Row {
        Row(scenario: name, threads: 1, nsPerOp: 1e9 / opsPerSecond, opsPerSecond: opsPerSecond,
            minOpsPerSecond: opsPerSecond, maxOpsPerSecond: opsPerSecond, baseline: nil, ratioToBaseline: nil, note: "")
    }

    /// `ops` sequential gets from the main actor.
    @MainActor
    static func sequentialGetsOnTheMainActor(_ level: RedisCacheLevel<String, Data>, ops: Int) async {
        for i in 0..<ops { _ = try? await level.getIfPresent("k\(i % 1000)") }
    }

    /// One measured loop: its throughput, the process's CPU time per
    /// operation (every thread's, user and system), and the latencies it recorded.
    struct Run {
        let opsPerSecond: Double
        let cpuMicrosecondsPerOp: Double
        let latency: LatencySnapshot
        var minOpsPerSecond: Double
        var maxOpsPerSecond: Double

        init(opsPerSecond: Double, cpuMicrosecondsPerOp: Double, latency: LatencySnapshot) {
            self.opsPerSecond = opsPerSecond
            self.cpuMicrosecondsPerOp = cpuMicrosecondsPerOp
            self.latency = latency
            minOpsPerSecond = opsPerSecond
            maxOpsPerSecond = opsPerSecond
        }

        /// The median run (by throughput), with the range of all of them.
        static func median(_ runs: [Run]) -> Run {
            let sorted = runs.sorted { $0.opsPerSecond < $1.opsPerSecond }
            var middle = sorted[sorted.count / 2]
            middle.minOpsPerSecond = sorted.first!.opsPerSecond
            middle.maxOpsPerSecond = sorted.last!.opsPerSecond
            return middle
        }
    }

    /// Runs `body` (which does `ops` operations), on `executor` if given.
    static func measure(ops: Int, on executor: (any TaskExecutor)? = nil,
                        _ body: @escaping @Sendable (LatencyHistogram) async -> Void) async -> Run {
        let latency = LatencyHistogram()
        let cpu = processCPUSeconds()
        let start = ContinuousClock.now
        if let executor {
            await withTaskExecutorPreference(executor) { await body(latency) }
        } else {
            await body(latency)
        }
        let seconds = Double((ContinuousClock.now - start).nanoseconds) / 1e9
        return Run(opsPerSecond: Double(ops) / seconds,
                   cpuMicrosecondsPerOp: (processCPUSeconds() - cpu) / Double(ops) * 1e6, latency: latency.snapshot())
    }

    /// User and system CPU time of the whole process so far.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        return user + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// How long after one `RedisCacheLevel` sets a key another one (its own
    /// connections, its own tracking connection; as another process would
    /// have) has dropped it from the memory level above it.
    func invalidationDelay(url: String) async throws -> (p50: UInt64, p99: UInt64) {
        let writer = try RedisCacheLevel<String, Data>(url: url, prefix: "bench-inv:", connections: 1, invalidatesLevelsAbove: false)
        let reader = try RedisCacheLevel<String, Data>(url: url, prefix: "bench-inv:", connections: 1)
        let (heard, continuation) = AsyncStream<ContinuousClock.Instant>.makeStream()
        let cache = MemoryCacheLevel<String, Data>(capacity: 1 << 20) + reader
        let subscription = reader.subscribe { _ in continuation.yield(.now) }  // after the composition dropped the key
        defer { subscription.cancel() }
        for _ in 0..<500 where !reader.isReceivingInvalidations { try await Task.sleep(for: .milliseconds(10)) }
        var iterator = heard.makeAsyncIterator()
        let histogram = LatencyHistogram()
        for i in 0..<2000 {
            let start = ContinuousClock.now
            try await writer.set(Data([UInt8(i % 256)]), forKey: "k\(i % 100)")
            guard let at = await iterator.next() else { break }
            histogram.record(at - start)
        }
        withExtendedLifetime(cache) {}  // the stack and its subscription live through the loop
        await writer.shutdown(); await reader.shutdown()
        let snapshot = histogram.snapshot()
        return (snapshot.percentile(0.5) ?? 0, snapshot.percentile(0.99) ?? 0)
    }

    func fmt(_ ns: UInt64?) -> String {
        guard let ns else { return "-" }
        return ns >= 1_000_000 ? String(format: "%.1fms", Double(ns) / 1e6) : String(format: "%.0fµs", Double(ns) / 1e3)
    }

    /// `redis-benchmark -q` figures (requests per second) by command.
    /// With `cluster`, `--cluster` (the server is a node of a cluster).
    func redisBenchmark(port: Int, requests: Int, pipeline: Int, cluster: Bool = false) -> [String: Double] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-benchmark")
        process.arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-c", "1", "-n", "\(requests)", "-P", "\(pipeline)",
                             "-t", "get,set", "-q"] + (cluster ? ["--cluster"] : [])
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return [:] }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        var result: [String: Double] = [:]
        // Lines look like "SET: 98231.83 requests per second, p50=0.007 msec" (after \r progress lines).
        for line in String(decoding: data, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let parts = line.split(separator: " ")
            guard parts.count >= 2, parts[0].hasSuffix(":"), let rate = Double(parts[1]) else { continue }
            result[String(parts[0].dropLast())] = rate
        }
        return result
    }
}
