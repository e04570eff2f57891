import Foundation
#if canImport(Glibc)
import Glibc
#endif
@testable import StrataRedis
import StrataTestSupport
import Testing

/// A process the application starts never inherits (and so never keeps open)
/// the client's Redis connections.
@Suite struct RedisChildProcessTests {
    @Test func aChildStartedWhileConnectedDoesNotKeepTheConnectionOpen() async throws {
        let server = try await RedisServer()
        let client = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1))
        _ = try await client.send("CLIENT", "SETNAME", "inherited")
        // posix_spawn (as system(), fork/exec and most process libraries do)
        // passes every descriptor not marked close-on-exec to the child.
        var pid: pid_t = 0
        var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sleep"), strdup("30"), nil]
        defer { for arg in argv { free(arg) } }
        #expect(posix_spawn(&pid, "/bin/sleep", nil, nil, &argv, environ) == 0)
        defer { kill(pid, SIGKILL); var status: Int32 = 0; waitpid(pid, &status, 0) }
        await client.shutdown()
        let observer = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1))
        var open = -1
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            guard case .bulkString(let buffer?) = try await observer.send("CLIENT", "LIST") else { break }
            open = String(buffer: buffer).split(separator: "\n").filter { $0.contains(" name=inherited ") }.count
            if open == 0 { break }
            try await Task.sleep(for: .milliseconds(10))  // polling the server, with a deadline
        }
        #expect(open == 0, "the child process kept the closed connection open")
        await observer.shutdown(); await server.kill()
    }
}
