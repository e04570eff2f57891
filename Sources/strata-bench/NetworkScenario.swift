import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Strata
#if canImport(Glibc)
import Glibc
#endif

/// `NetworkFetcher` gets (`--only network`) next to a bare `URLSession`
/// data task for the same URL, sequential, against a loopback HTTP/1.1
/// keep-alive server run by this process (`LoopbackHTTPServer`): what the
/// fetcher adds to the transport (its delegate counting the body, the
/// whole-request deadline, status handling). Runs interleaved; a 7-byte and
/// a 1 MiB body.
struct NetworkScenario {
    let report: Report
    let options: BenchOptions

    func run() async throws {
        guard options.wants("network") else { return }
        for (label, size, ops) in [("7 B", 7, 2_000), ("1 MiB", 1 << 20, 200)] {
            let server = try LoopbackHTTPServer(body: Data(repeating: 0x61, count: size))
            defer { server.stop() }
            let url = URL(string: "http://127.0.0.1:\(server.port)/value")!
            let fetcher = NetworkFetcher()
            let session = URLSession(configuration: .default)
            // Warm both (connection set up), then alternate runs.
            for _ in 0..<20 {
                _ = try await fetcher.getIfPresent(url)
                _ = try await Self.bareGet(session, url)
            }
            var bare: [Double] = [], fetched: [Double] = []
            for _ in 0..<max(3, options.runs) {
                bare.append(try await Self.opsPerSecond(ops) { _ = try await Self.bareGet(session, url) })
                fetched.append(try await Self.opsPerSecond(ops) { _ = try await fetcher.getIfPresent(url) })
            }
            let baseRow = report.row("baseline URLSession data task, \(label) body", threads: 1, samples: bare)
            report.add(baseRow)
            report.add(report.row("NetworkFetcher get, \(label) body", threads: 1, samples: fetched, baseline: baseRow))
            session.invalidateAndCancel()
        }
    }

    static func opsPerSecond(_ ops: Int, _ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        for _ in 0..<ops { try await body() }
        return Double(ops) / Double((ContinuousClock.now - start).nanoseconds) * 1e9
    }

    /// A completion-handler data task, as an application would write it.
    static func bareGet(_ session: URLSession, _ url: URL) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: url) { data, _, error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: data ?? Data()) }
            }.resume()
        }
    }
}

/// A minimal HTTP/1.1 server on 127.0.0.1 (an ephemeral port) answering
/// every request with `200` and the same body, keeping connections open;
/// one thread per connection. For the bench only.
final class LoopbackHTTPServer: Sendable {
    let port: Int
    private let listener: CInt

    init(body: Data) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var yes: CInt = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<CInt>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let response = Data("HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nContent-Type: application/octet-stream\r\n\r\n".utf8) + body
        Thread.detachNewThread {
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }  // closed by stop()
                Thread.detachNewThread { Self.serve(client, response) }
            }
        }
    }

    /// Answers each request (a header block ending in an empty line; no
    /// bodies) until the client closes.
    private static func serve(_ client: CInt, _ response: Data) {
        var yes: CInt = 1
        setsockopt(client, CInt(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<CInt>.size))
        defer { close(client) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            pending.append(contentsOf: buffer[0..<count])
            while let range = pending.firstRange(of: end) {
                pending.removeSubrange(0..<range.upperBound)
                let sent = response.withUnsafeBytes { raw -> Bool in
                    var offset = 0
                    while offset < raw.count {
                        let n = write(client, raw.baseAddress! + offset, raw.count - offset)
                        guard n > 0 else { return false }
                        offset += n
                    }
                    return true
                }
                guard sent else { return }
            }
        }
    }

    func stop() {
        shutdown(listener, CInt(SHUT_RDWR))
        close(listener)
    }
}
