import Foundation
#if canImport(Glibc)
import Glibc
#endif
import StrataTestSupport
import Testing

/// A test's `redis-server` never outlives the test that started it, nor the
/// test process: not when the test throws before `kill()`, not when the
/// process is SIGKILLed.
@Suite struct RedisServerLifetimeTests {
    /// Whether `pid` is a `redis-server` that has not exited (a zombie, or a
    /// process id taken since by another program, is not).
    static func isRunningRedis(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return false }
        let name = stat[stat.index(after: open)..<close]
        let state = stat[stat.index(after: close)...].split(separator: " ").first
        return name.hasPrefix("redis-server") && state != "Z"
    }

    struct Thrown: Error { let pid: Int32 }

    @Test func aServerDiesWithATestThatThrowsBeforeKillingIt() async throws {
        func failingTest() async throws {
            let server = try await RedisServer()
            throw Thrown(pid: server.process.processIdentifier)
        }
        var pid: Int32 = 0
        do { try await failingTest() } catch let thrown as Thrown { pid = thrown.pid }
        try #require(pid > 0)
        #expect(await poll(timeout: .seconds(10)) { !Self.isRunningRedis(pid) }, "redis-server \(pid) outlived its test")
    }

    @Test func aServerDiesWithTheProcessThatStartedItWhenThatProcessIsKilled() async throws {
        let holder = Process()
        holder.executableURL = productsDirectory.appendingPathComponent("StrataRedisWorker")
        holder.arguments = ["--hold-server"]
        let stdin = Pipe(), stdout = Pipe()
        holder.standardInput = stdin
        holder.standardOutput = stdout
        try holder.run()
        defer {
            if holder.isRunning { kill(holder.processIdentifier, SIGKILL) }
            try? stdin.fileHandleForWriting.close()
        }
        // `server PID PORT`, once the server answers (a blocking read: the holder writes it or exits).
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let words = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        try #require(words.count == 3 && words[0] == "server", "holder printed \(words)")
        let pid = try #require(Int32(words[1]))
        #expect(Self.isRunningRedis(pid))

        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        #expect(await poll(timeout: .seconds(10)) { !Self.isRunningRedis(pid) },
                "redis-server \(pid) outlived the SIGKILLed process that started it")
    }
}
