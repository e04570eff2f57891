import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The loopback HTTP origin in Fixtures/origin_server.py, one per test (or
/// another script in Fixtures that prints its port first, such as
/// hostile_server.py).
public final class OriginServer: @unchecked Sendable {
    // Immutable after init apart from `process`, which only `stop()` touches.
    let process = Process()
    public let port: Int

    public var base: String { "http://127.0.0.1:\(port)" }
    public func url(_ path: String) -> URL { URL(string: base + path)! }

    public init(script name: String = "origin_server.py") async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Fixtures/" + name).standardized
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let line: String = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var data = Data()
                while !data.contains(0x0A) {
                    let chunk = out.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    data.append(chunk)
                }
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            kill(process.processIdentifier, SIGKILL)
            throw ServerError(message: "origin server did not start (is python3 installed?): \(line)")
        }
        self.port = port
    }

    public struct ServerError: Error { let message: String }

    public struct Stats: Decodable { public var counts: [String: Int]; public var aborted: Int }

    public func stats() async throws -> Stats {
        let (data, _) = try await URLSession.shared.data(from: url("/stats"))
        return try JSONDecoder().decode(Stats.self, from: data)
    }

    /// SIGKILL (a Process child may ignore SIGTERM) and reap it off the pool.
    public func stop() async {
        kill(process.processIdentifier, SIGKILL)
        let process = self.process
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { process.waitUntilExit(); continuation.resume() }
        }
    }
}
