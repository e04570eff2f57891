import Foundation
import StrataSim
import StrataTestSupport

/// The four LIRS traces from Caffeine's simulator (multi1, multi2, ps,
/// sprite), kept in the repository (`Tests/StrataSimTests/Traces`, 220 KB)
/// so that a fresh clone tests them; `$STRATA_TRACES` points elsewhere. A
/// missing trace fails the test with this message rather than skipping it.
enum SharedTraces {
    static var directory: String {
        if let override = ProcessInfo.processInfo.environment["STRATA_TRACES"] { return override }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Traces").path
    }

    static func path(_ name: String) -> String { "\(directory)/\(name).trace.gz" }

    static func load(_ name: String) throws -> Trace {
        let path = path(name)
        guard FileManager.default.fileExists(atPath: path) else {
            throw MissingTrace(description: "\(path) not found: put the LIRS traces there or set STRATA_TRACES")
        }
        return try TraceReader().read(path: path)
    }

    struct MissingTrace: Error, CustomStringConvertible { let description: String }
}

/// Writes `text` (or bytes) to a fresh temporary file and returns its path.
func temporaryFile(_ contents: String, suffix: String = ".trace") -> String {
    temporaryFile(bytes: Array(contents.utf8), suffix: suffix)
}

func temporaryFile(bytes: [UInt8], suffix: String = ".trace") -> String {
    let path = temporaryTraceDirectory + "/\(UUID().uuidString.prefix(8))\(suffix)"
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    return path
}

/// This test process's directory for ``temporaryFile(bytes:suffix:)``,
/// removed when the process exits.
let temporaryTraceDirectory: String = {
    let directory = traceDirectory(of: getpid())
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    atexit { try? FileManager.default.removeItem(atPath: traceDirectory(of: getpid())) }
    return directory
}()

private func traceDirectory(of process: pid_t) -> String {
    NSTemporaryDirectory() + "strata-sim-tests-\(process)"
}

/// Hits of a policy kind over a trace at one size.
func hits(_ kind: PolicyKind, _ trace: Trace, size: Int) -> Int {
    Simulator(policies: [kind], sizes: [size]).run(trace)[0].hits
}

func percent(_ kind: PolicyKind, _ trace: Trace, size: Int) -> Double {
    100 * Double(hits(kind, trace, size: size)) / Double(trace.count)
}

/// ``percent(_:_:size:)`` on a Dispatch thread: a long replay would otherwise
/// hold one of the few cooperative threads for seconds, and under `swift
/// test` (every module in one process) that starves the explorer's
/// time-bound workload tests running beside it.
func percentOffThePool(_ kind: PolicyKind, _ trace: Trace, size: Int) async -> Double {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: percent(kind, trace, size: size)) }
    }
}

/// `path` compressed with `gzip` into `path.gz`; returns the new path.
func gzipped(_ path: String) throws -> String {
    let target = path + ".gz"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", "gzip -c \"$0\" > \"$1\"", path, target]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
    return target
}

/// What a run of the real `strata sim` binary printed, and how it ended.
struct SimRun {
    var status: Int32
    var exited: Bool
    var stdout: String
    var stderr: String
}

/// Runs the real `strata sim` binary with `arguments`, adding `environment`
/// to this process's.
func runStrataSim(_ arguments: [String], environment: [String: String] = [:]) throws -> SimRun {
    let process = Process()
    process.executableURL = productsDirectory.appendingPathComponent("strata")
    process.arguments = ["sim"] + arguments
    if !environment.isEmpty {
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return SimRun(status: process.terminationStatus, exited: process.terminationReason == .exit, stdout: stdout, stderr: stderr)
}
