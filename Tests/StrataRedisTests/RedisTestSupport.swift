import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// Waits for `condition` (an effect of another process or connection), up to
/// `timeout` (long: it returns as soon as the condition holds, and a CI machine
/// starting many Redis servers at once can be slow to connect).
func poll(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return try await condition()
}

/// How many times Redis ran `command` (`INFO commandstats`).
func commandCalls(_ client: RedisClient, _ command: String) async throws -> Int {
    guard case .bulkString(let buffer?) = try await client.send("INFO", "commandstats") else { return -1 }
    let text = String(buffer: buffer)
    guard let line = text.split(separator: "\r\n").first(where: { $0.hasPrefix("cmdstat_\(command):calls=") }) else { return 0 }
    return Int(line.dropFirst("cmdstat_\(command):calls=".count).prefix { $0.isNumber }) ?? -1
}

/// Runs `redis-cli -p <port> arguments…` (`-s <socket>` for a TLS server): a
/// separate process and a client that is not Strata.
@discardableResult
func redisCLI(_ server: RedisServer, _ arguments: String...) async throws -> String {
    try await redisCLIArguments(server, arguments)
}

/// `redisCLI` with the arguments in an array.
@discardableResult
func redisCLIArguments(_ server: RedisServer, _ arguments: [String]) async throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/redis-cli")
    process.arguments = server.cliArguments + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    // A redis-cli that hangs (a stopped server) is killed after 30 s, and said so.
    let watchdog = Mutex<ChildWatchdog?>(nil)
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        process.terminationHandler = { _ in continuation.resume() }
        do {
            try process.run()
            watchdog.withLock { $0 = process.watchdog(.seconds(30)) }
        } catch { continuation.resume(throwing: error) }
    }
    if watchdog.withLock({ $0?.finish() }) == true { Issue.record("redis-cli \(arguments.joined(separator: " ")) hung; killed after 30 s") }
    return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
}

/// The lines of `CLIENT LIST`.
func clientList(_ client: RedisClient) async throws -> [String] {
    guard case .bulkString(let buffer?) = try await client.send("CLIENT", "LIST") else { return [] }
    return String(buffer: buffer).split(separator: "\n").map(String.init)
}

/// One command's reply slot, as a future (for `EmbeddedChannel` tests).
struct PendingReply {
    let replies: PendingReplies
    let future: EventLoopFuture<RESPValue>

    init(_ eventLoop: any EventLoop) {
        let promise = eventLoop.makePromise(of: RESPValue.self)
        replies = PendingReplies(count: 1) { result in promise.completeWith(result.map { $0[0] }) }
        future = promise.futureResult
    }
}

/// Open descriptors of this process that are sockets connected to `port`
/// (other suites run meanwhile: a count of all descriptors would be theirs too).
func socketsTo(_ port: Int) -> Int {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
    return names.compactMap(Int32.init).filter { fd in
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
        }
        return ok && Int32(address.sin_family) == AF_INET && Int(UInt16(bigEndian: address.sin_port)) == port
    }.count
}
