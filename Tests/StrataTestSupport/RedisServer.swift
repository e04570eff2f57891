import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` on 127.0.0.1 with persistence off, for one test.
///
/// A server never outlives what started it: `kill()` ends it; so does the
/// last reference going away (a test that throws or fails a `#require`
/// before its `kill()`); and, whatever way the process that started it ends
/// (a crash, a timeout, Ctrl-C, SIGKILL), the kernel kills the server with
/// it. For that last one the server is started through `setpriv --pdeathsig
/// KILL` (util-linux), which sets `PR_SET_PDEATHSIG` and then execs
/// `redis-server` (same process id; the setting survives the exec). The
/// kernel sends that signal when the *thread* that started the child ends,
/// not the process, and the threads that run tasks come and go: so every
/// server is started from one thread that lives as long as the process
/// (`SpawnThread`).
///
/// ``Options`` start it with TLS only (`rediss://`), or with more arguments.
public final class RedisServer: @unchecked Sendable {
    // `process` is replaced only by restart(), which tests call sequentially.
    public private(set) var process: Process
    public private(set) var port = 0
    public let options: Options
    /// Plain text on 127.0.0.1, or `rediss://` on it when the server speaks TLS only.
    public var url: String { "\(options.tls == nil ? "redis" : "rediss")://127.0.0.1:\(port)" }
    /// With TLS, the server also listens, in plain text, on this Unix socket
    /// (readiness checks and `redis-cli`); `nil` without TLS.
    public let unixSocket: String?
    /// Where `redis-cli` reaches this server: `-p <port>`, or `-s <socket>` with TLS.
    public var cliArguments: [String] { unixSocket.map { ["-s", $0] } ?? ["-p", "\(port)"] }
    private let socketDirectory: TemporaryDirectory?

    /// How to start a server: the defaults are a plain server on a free port.
    public struct Options: Sendable {
        /// TLS only (`--port 0 --tls-port <port>`) with these files (PEM).
        public var tls: TLS?
        /// More `redis-server` arguments (`--requirepass`, `--user` …).
        public var arguments: [String]

        public init(tls: TLS? = nil, arguments: [String] = []) {
            self.tls = tls
            self.arguments = arguments
        }

        public struct TLS: Sendable {
            public var certificateFile: String
            public var keyFile: String
            /// The CA that client certificates must chain to.
            public var caCertificateFile: String
            /// Whether clients must present a certificate (`tls-auth-clients`).
            public var requiresClientCertificates: Bool

            public init(certificateFile: String, keyFile: String, caCertificateFile: String, requiresClientCertificates: Bool = false) {
                self.certificateFile = certificateFile
                self.keyFile = keyFile
                self.caCertificateFile = caCertificateFile
                self.requiresClientCertificates = requiresClientCertificates
            }

            /// The server's files among `certificates`.
            public init(_ certificates: TestCertificates, requiresClientCertificates: Bool = false) {
                self.init(certificateFile: certificates.serverCertificate, keyFile: certificates.serverKey,
                          caCertificateFile: certificates.caCertificate, requiresClientCertificates: requiresClientCertificates)
            }
        }
    }

    public struct Missing: Error, CustomStringConvertible {
        let program: String
        public var description: String { "\(program) is not installed: run `make test` (scripts/setup.sh installs it)" }
    }

    public init(_ options: Options = Options()) async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-server") else { throw Missing(program: "redis-server") }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else { throw Missing(program: "setpriv (util-linux)") }
        self.options = options
        // A short path: a Unix socket's path is limited to 107 bytes.
        socketDirectory = options.tls == nil ? nil : TemporaryDirectory("rs")
        unixSocket = socketDirectory.map { "\($0.path)/redis.sock" }
        process = Process()
        // A port another server already holds (this process's or another's)
        // is taken by none of ours: the server we reach must be the one we
        // started, or a test would talk to another test's server.
        for _ in 0..<20 {
            let port = Self.ports.next()
            if try await start(on: port) {
                self.port = port
                return
            }
        }
        throw Unavailable(reason: "no free port for redis-server after 20 tries")
    }

    public struct Unavailable: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { "cannot start redis-server: \(reason)" }
    }

    /// Ports handed out in this process, never twice, below the kernel's
    /// ephemeral range (which outgoing connections and `bind(0)` draw from,
    /// so a port a killed server freed is not soon taken by another).
    static let ports = PortAllocator()

    /// A loopback port nothing listens on now (and none of this process's servers will take).
    public static func unusedPort() -> Int { ports.next() }

    /// Starts a server on `port`; `false` when what answers there is not it.
    /// `process` becomes the new server only once it answers.
    private func start(on port: Int) async throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        var listen = ["--port", "\(port)"]
        if let tls = options.tls, let unixSocket {
            listen = ["--port", "0", "--tls-port", "\(port)", "--tls-cert-file", tls.certificateFile, "--tls-key-file", tls.keyFile,
                      "--tls-ca-cert-file", tls.caCertificateFile, "--tls-auth-clients", tls.requiresClientCertificates ? "yes" : "no",
                      "--unixsocket", unixSocket, "--unixsocketperm", "700"]
        }
        process.arguments = ["--pdeathsig", "KILL", "--", "/usr/bin/redis-server"] + listen
            + ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
               "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning",
               "--enable-debug-command", "yes"]  // DEBUG SLEEP stalls the server in fault tests
            + options.arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try await SpawnThread.shared.run(process)
        func discard() {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        // Ready when it answers with its own process id (an external process: poll, bounded).
        for _ in 0..<200 {
            if let pid = unixSocket.map({ Self.serverProcessID(unixSocket: $0) }) ?? Self.serverProcessID(port: port) {
                if pid == Int(process.processIdentifier) {
                    self.process = process
                    return true
                }
                break  // another server holds the port
            }
            if !process.isRunning { break }  // could not bind
            do { try await Task.sleep(for: .milliseconds(10)) } catch { discard(); throw error }
        }
        discard()
        return false
    }

    /// The `process_id` that the server on `port` reports (`INFO server`), or
    /// `nil` when nothing answers there.
    static func serverProcessID(port: Int) -> Int? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
        return connected ? processID(askingOn: fd) : nil
    }

    /// ``serverProcessID(port:)`` through a Unix socket.
    static func serverProcessID(unixSocket path: String) -> Int? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
        return connected ? processID(askingOn: fd) : nil
    }

    /// Asks `INFO server` on the connected `fd` and reads `process_id`.
    private static func processID(askingOn fd: CInt) -> Int? {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("INFO server\r\n".utf8)
        guard write(fd, request, request.count) == request.count else { return nil }
        var reply = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while reply.count < 64 << 10 {
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { break }
            reply += buffer[0..<n]
            // Only whole lines: a read may end in the middle of the number.
            var lines = String(decoding: reply, as: UTF8.self).components(separatedBy: "\r\n")
            lines.removeLast()  // unterminated (empty when the reply ends with a line)
            if let line = lines.first(where: { $0.hasPrefix("process_id:") }) {
                return Int(line.dropFirst("process_id:".count))
            }
        }
        return nil
    }

    /// A server its test did not kill (it threw first, or forgot) dies with
    /// its last reference; Foundation reaps it.
    deinit {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        socketDirectory?.remove()
    }

    /// SIGKILL (a Process child may ignore SIGTERM) and reap it off the pool.
    public func kill() async {
        Glibc.kill(process.processIdentifier, SIGKILL)
        let process = self.process
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { process.waitUntilExit(); continuation.resume() }
        }
    }

    /// Starts a fresh server on the same port (no other server of this
    /// process takes it meanwhile).
    public func restart() async throws {
        guard try await start(on: port) else { throw Unavailable(reason: "port \(port) was taken while the server was down") }
    }
}

/// Starts processes from one thread that never ends, so that a child's
/// parent-death signal (`PR_SET_PDEATHSIG`, sent when the thread that
/// started the child ends) comes only when this process ends.
final class SpawnThread: Sendable {
    static let shared = SpawnThread()

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let pending = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                pending.wait()
                let job = jobs.withLock { $0.removeFirst() }
                job()
            }
        }
        thread.name = "RedisServer.SpawnThread"
        thread.start()
    }

    /// `process.run()` on this thread.
    func run(_ process: Process) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            jobs.withLock {
                $0.append {
                    do { try process.run(); continuation.resume() } catch { continuation.resume(throwing: error) }
                }
            }
            pending.signal()
        }
    }
}

/// Hands out TCP ports for test servers: each once per process, starting at
/// an offset drawn from the process id, below the kernel's ephemeral range
/// (`/proc/sys/net/ipv4/ip_local_port_range`), skipping ports in use.
final class PortAllocator: Sendable {
    private let state: Mutex<(low: Int, high: Int, next: Int)>

    init() {
        let ephemeralLow = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8))
            .flatMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).first.flatMap { Int($0) } } ?? 32768
        // Ports 10000 up to the ephemeral range; if that range starts low, above it.
        let (low, high) = ephemeralLow > 12000 ? (10000, ephemeralLow - 1) : (61000, 65000)
        let start = low + Int(getpid()) * 97 % (high - low)
        state = Mutex((low, high, start))
    }

    /// A port nothing listens on now, never handed out before in this process.
    func next() -> Int {
        while true {
            let port = state.withLock { state -> Int in
                let port = state.next
                state.next = state.next >= state.high ? state.low : state.next + 1
                return port
            }
            if Self.isFree(port) { return port }
        }
    }

    static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
