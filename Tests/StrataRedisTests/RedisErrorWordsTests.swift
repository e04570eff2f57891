import Foundation
import NIOCore
import NIOPosix
@testable import StrataRedis
import Testing

/// A connect failure says what happened in words, not NIO's types (before:
/// `SingleConnectionFailure(target: [IPv4]127.0.0.1/127.0.0.1:26653, error: …)`).
@Suite struct RedisErrorWordsTests {
    @Test func aRefusedConnectionSaysSo() async throws {
        // A port nobody listens on: bind one, note it, close it.
        let probe = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton).bind(host: "127.0.0.1", port: 0).get()
        let port = probe.localAddress!.port!
        try await probe.close()
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
