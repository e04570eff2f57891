import Foundation
import Synchronization

/// A real Redis Cluster on 127.0.0.1 for one test: `masters` servers started
/// with `--cluster-enabled yes` (each with its own config file in a
/// temporary directory, its bus on a port of its own), joined by
/// `redis-cli --cluster create … --cluster-replicas 0`, and ready once every
/// node's `CLUSTER INFO` says `cluster_state:ok` and knows every other node.
///
/// - The nodes are ``RedisServer``s, so they never outlive the test (its
///   last reference, or the test process, however it ends) and a killed
///   one can be restarted on its port (it rejoins with its config file).
/// - `cluster-require-full-coverage no`: a killed master's slots fail, the
///   others' keep answering (the default stops the whole cluster).
/// - `cluster-node-timeout` is 2 s, so the nodes notice a dead master soon.
public final class RedisCluster: Sendable {
    public let nodes: [RedisServer]
    private let directory: TemporaryDirectory

    /// `redis://127.0.0.1:<port>` of every node, to seed a client with.
    public var seedURLs: [String] { nodes.map(\.url) }
    /// `127.0.0.1:<port>` of every node, as `redis-cli --cluster` and `MOVED` name them.
    public var addresses: [String] { nodes.map { "127.0.0.1:\($0.port)" } }

    public init(masters: Int = 3) async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-cli") else { throw RedisServer.Missing(program: "redis-cli") }
        let directory = TemporaryDirectory("rc")
        self.directory = directory
        var nodes: [RedisServer] = []
        for index in 0..<masters {
            let folder = directory.url.appendingPathComponent("node\(index)").path
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            nodes.append(try await RedisServer(RedisServer.Options(arguments: [
                "--cluster-enabled", "yes", "--dir", folder, "--cluster-config-file", "nodes.conf",
                "--cluster-port", "\(RedisServer.ports.next())", "--cluster-node-timeout", "2000",
                "--cluster-require-full-coverage", "no",
            ])))
        }
        self.nodes = nodes
        let output = try await Self.cli(["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" }
            + ["--cluster-replicas", "0", "--cluster-yes"])
        guard output.contains("All 16384 slots covered") else {
            throw RedisServer.Unavailable(reason: "redis-cli --cluster create failed: \(output.suffix(500))")
        }
        try await waitUntilHealthy()
    }

    /// Waits until every live node reports `cluster_state:ok` and knows all
    /// the others (polled, up to `timeout`); throws naming the node if not.
    public func waitUntilHealthy(timeout: Duration = .seconds(30)) async throws {
        let deadline = ContinuousClock.now + timeout
        for node in nodes where node.process.isRunning {
            while true {
                let info = try await Self.cli(["-p", "\(node.port)", "CLUSTER", "INFO"])
                if info.contains("cluster_state:ok"), info.contains("cluster_known_nodes:\(nodes.count)") { break }
                guard ContinuousClock.now < deadline else {
                    throw RedisServer.Unavailable(reason: "cluster node 127.0.0.1:\(node.port) not ok after \(timeout): \(info.prefix(300))")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// The node (index in ``nodes``) serving `slot` now, as node 0 sees it.
    public func owner(ofSlot slot: Int) async throws -> Int? {
        let slots = try await Self.cli(["-p", "\(nodes[0].port)", "CLUSTER", "SLOTS"]).split(separator: "\n").map(String.init)
        // redis-cli prints CLUSTER SLOTS flat: start, end, ip, port, id, … per range.
        var index = 0
        while index + 3 < slots.count {
            if let start = Int(slots[index]), let end = Int(slots[index + 1]), slots[index + 2] == "127.0.0.1",
               let port = Int(slots[index + 3]) {
                if (start...end).contains(slot) { return nodes.firstIndex { $0.port == port } }
                index += 4
            } else {
                index += 1
            }
        }
        return nil
    }

    /// The node id (`CLUSTER MYID`) of node `index`.
    public func nodeID(_ index: Int) async throws -> String {
        try await Self.cli(["-p", "\(nodes[index].port)", "CLUSTER", "MYID"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Kills every node (SIGKILL) and removes the config files.
    public func kill() async {
        for node in nodes { await node.kill() }
        directory.remove()
    }

    deinit { directory.remove() }  // the nodes die with their own last reference

    /// Runs `redis-cli arguments…` and returns what it printed (stdout and
    /// stderr). One that hangs is killed after `limit`, and said so.
    @discardableResult
    public static func cli(_ arguments: [String], limit: Duration = .seconds(60)) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let watchdog = process.watchdog(limit)
        let data = await withCheckedContinuation { (continuation: CheckedContinuation<Data, Never>) in
            DispatchQueue.global().async { continuation.resume(returning: output.fileHandleForReading.readDataToEndOfFile()) }
        }
        await process.exit(within: limit)
        if watchdog.finish() { throw RedisServer.Unavailable(reason: "redis-cli \(arguments.joined(separator: " ")) hung; killed after \(limit)") }
        return String(decoding: data, as: UTF8.self)
    }
}
