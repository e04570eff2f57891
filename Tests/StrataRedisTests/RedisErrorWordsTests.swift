import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
@testable import StrataRedis
import Testing

/// A connect failure says what happened in words, not NIO's types (before:
/// `SingleConnectionFailure(target: [IPv4]127.0.0.1/127.0.0.1:26653, error: …)`).
@Suite struct RedisErrorWordsTests {
    @Test func aRefusedConnectionSaysSo() async throws {
        // A port nobody listens on, held (bound, not listening) so that no
        // server another test starts meanwhile can take it: connects are refused.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound, "bind a port")
        let port = Int(UInt16(bigEndian: address.sin_port))
        let client = RedisClient(configuration: try RedisConfiguration(url: "redis://127.0.0.1:\(port)", connections: 1))
        do {
            _ = try await client.connection()
            Issue.record("connected to a closed port")
        } catch {
            #expect("\(error)" == "cannot connect to Redis: 127.0.0.1:\(port): connection refused", "\(error)")
        }
        await client.shutdown()
    }
}
