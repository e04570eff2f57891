import Foundation
import Strata
import StrataRedis
#if canImport(Glibc)
import Glibc
#endif

/// `RedisCacheLevel(cluster:)` on a 3-master cluster on loopback (started
/// here: `redis-server --cluster-enabled yes` ×3, `redis-cli --cluster
/// create`), next to `redis-benchmark --cluster` against it in the same run:
/// sequential get and set (one connection per master), and a 100-key batch
/// read over many slots. `--only redis-cluster`.
struct RedisClusterScenario {
    let scenario: RedisScenario

    @concurrent func run() async throws {
        guard scenario.options.wants("redis-cluster") else { return }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-cli"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-benchmark") else {
            print("redis-cluster: skipped (redis-server / redis-cli / redis-benchmark not installed; `make setup` installs them)")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-cluster-\(getpid())")
        let base = 41000 + Int(getpid() % 2000) * 3
        var servers: [Process] = []
        defer {
            for server in servers { kill(server.processIdentifier, SIGKILL) }
            try? FileManager.default.removeItem(at: directory)
        }
        for node in 0..<3 {
            let folder = directory.appendingPathComponent("node\(node)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let server = Process()
            server.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
            server.arguments = ["--port", "\(base + node)", "--cluster-port", "\(base + node + 10)", "--cluster-enabled", "yes",
                                "--cluster-config-file", "nodes.conf", "--dir", folder.path, "--bind", "127.0.0.1",
                                "--save", "", "--appendonly", "no"]
            server.standardOutput = FileHandle.nullDevice
            try server.run()
            servers.append(server)
        }
        let urls = (0..<3).map { "redis://127.0.0.1:\(base + $0)" }
        for url in urls {  // each node answers
            let probe = try RedisClient(url: url)
            for _ in 0..<100 where (try? await probe.send("PING")) == nil { try await Task.sleep(for: .milliseconds(20)) }
            await probe.shutdown()
        }
        try cli(["--cluster", "create"] + (0..<3).map { "127.0.0.1:\(base + $0)" } + ["--cluster-replicas", "0", "--cluster-yes"])
        for node in 0..<3 {
            var ok = false
            for _ in 0..<500 where !ok {
                ok = try cli(["-p", "\(base + node)", "CLUSTER", "INFO"]).contains("cluster_state:ok")
                if !ok { try await Task.sleep(for: .milliseconds(20)) }
            }
            guard ok else { print("redis-cluster: skipped (node \(node) never said cluster_state:ok)"); return }
        }

        let level = try RedisCacheLevel<String, Data>(cluster: urls, prefix: "bench:", codec: .data, connections: 1,
                                                       invalidatesLevelsAbove: false)
        let value = Data(repeating: 0x61, count: 3)
        let ops = max(10_000, scenario.options.opsPerRun / 40)
        for i in 0..<1000 { try await level.set(value, forKey: "k\(i)") }
        let setRun = await RedisScenario.measure(ops: ops) { latency in
            for i in 0..<ops {
                let t0 = ContinuousClock.now
                try? await level.set(value, forKey: "k\(i % 1000)")
                latency.record(ContinuousClock.now - t0)
            }
        }
        let getRun = await RedisScenario.measure(ops: ops) { latency in
            for i in 0..<ops {
                let t0 = ContinuousClock.now
                _ = try? await level.getIfPresent("k\(i % 1000)")
                latency.record(ContinuousClock.now - t0)
            }
        }
        let batches = max(200, ops / 100)
        let batchRun = await RedisScenario.measure(ops: batches * 100) { latency in
            for i in 0..<batches {
                let keys = (0..<100).map { "k\((i * 100 + $0) % 1000)" }
                let t0 = ContinuousClock.now
                _ = await level.batchGetSome(keys)
                latency.record(ContinuousClock.now - t0)
            }
        }
        await level.shutdown()
        let baseline = scenario.redisBenchmark(port: base, requests: ops, pipeline: 1, cluster: true)
        let report = scenario.report
        if let get = baseline["GET"] { report.add(scenario.baselineRow("baseline redis-benchmark --cluster GET -c 1", get)) }
        report.add(scenario.row("RedisCacheLevel(cluster:) get, sequential", getRun, baseline: baseline["GET"],
                                note: "3 masters, 1 conn each"))
        if let set = baseline["SET"] { report.add(scenario.baselineRow("baseline redis-benchmark --cluster SET -c 1", set)) }
        report.add(scenario.row("RedisCacheLevel(cluster:) set, sequential", setRun, baseline: baseline["SET"]))
        report.add(scenario.row("RedisCacheLevel(cluster:) batchGetSome ×100", batchRun, baseline: nil,
                                note: "keys/s; one MGET+PTTL transaction per slot; latency per batch"))
    }

    /// `redis-cli arguments…`, waited for; what it printed.
    @discardableResult
    private func cli(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
