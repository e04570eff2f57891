import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` on 127.0.0.1 with persistence off, for one test.
public final class RedisServer: @unchecked Sendable {
    // `process` is replaced only by restart(), which tests call sequentially.
    public private(set) var process: Process
    public let port: Int
    public var url: String { "redis://127.0.0.1:\(port)" }

    public struct Missing: Error, CustomStringConvertible {
        public var description: String { "redis-server is not installed: run `make test` (scripts/setup.sh installs it)" }
    }

    public init() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") else { throw Missing() }
        port = Self.freePort()
        process = Process()
        try await start()
    }

    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private func start() async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        process.arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning",
                             "--enable-debug-command", "yes"]  // DEBUG SLEEP stalls the server in fault tests
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // Ready when it accepts a connection (an external process: poll, bounded).
        for _ in 0..<200 {
            if Self.canConnect(port: port) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw Missing()
    }

    static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// SIGKILL (a Process child may ignore SIGTERM) and reap it off the pool.
    public func kill() async {
        Glibc.kill(process.processIdentifier, SIGKILL)
        let process = self.process
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { process.waitUntilExit(); continuation.resume() }
        }
    }

    /// Starts a fresh server on the same port.
    public func restart() async throws { try await start() }
}
