import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// Found by review of the caller-thread write path and the back-fill changes.
@Suite(.serialized) struct RedisRequestPathRegressionTests {
    static func echo(_ connection: RedisConnection, _ text: String) async throws -> String? {
        guard case .bulkString(let buffer?) = try await connection.send([Array("ECHO".utf8), Array(text.utf8)]) else { return nil }
        return String(buffer: buffer)
    }

    /// `RedisConnection.connect`, step for step, but from a given local address.
    static func connect(port: Int, from local: SocketAddress, timeout: TimeAmount = .seconds(2)) async throws -> RedisConnection {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(to: local)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let queue = RedisRequestQueue(channel: channel, timeout: timeout)
                    try channel.pipeline.syncOperations.addHandler(RedisCommandHandler(queue: queue))
                }
            }
        let channel = try await bootstrap.connect(host: "127.0.0.1", port: port).get()
        let queue = try await channel.eventLoop.submit {
            try channel.pipeline.syncOperations.handler(type: RedisCommandHandler.self).queue
        }.get()
        if let descriptor = ChannelSocket.duplicateDescriptor(of: channel) { queue.adopt(descriptor: descriptor) }
        return RedisConnection(channel: channel, queue: queue, timeout: .seconds(2))
    }

    /// Two connections of one process with the same local and remote *ports*
    /// (different addresses: what the kernel does for connections to two
    /// hosts on the same port). Matched by port only, the second connection
    /// duplicated the first one's socket and wrote its requests there: the
    /// first connection's caller got the second's reply.
    @Test func aConnectionWritesItsRequestsOnItsOwnSocket() async throws {
        let server = try await RedisServer()
        // Protected mode turns away 127.0.0.2 (not "local" to Redis); a second host would not be.
        #expect(try await redisCLI(server, "CONFIG", "SET", "protected-mode", "no").contains("OK"))
        let b = try await RedisConnection.connect(try RedisConfiguration(url: server.url, commandTimeout: .seconds(3)),
                                                  group: MultiThreadedEventLoopGroup.singleton)
        let port = try #require(b.channel.localAddress?.port)
        let a = try await Self.connect(port: server.port, from: try SocketAddress(ipAddress: "127.0.0.2", port: port))
        #expect(a.channel.localAddress?.port == port && a.channel.localAddress?.ipAddress == "127.0.0.2")
        // b's server side is busy for 1 s (a blocking pop), then a sends, then b sends again.
        let pop = Task { try await b.send([Array("BLPOP".utf8), Array("review:nothing".utf8), Array("1".utf8)]) }
        #expect(await poll { b.queue.waitingCount == 1 })
        let fromA = Task { try await Self.echo(a, "from-A") }
        try await Task.sleep(for: .milliseconds(100))  // a has sent (on the wrong socket, it would wait behind BLPOP)
        let fromB = Task { try await Self.echo(b, "from-B") }
        let popped = await Result { try await pop.value }
        let b2 = await Result { try await fromB.value }
        let a1 = await Result { try await fromA.value }
        #expect((try? b2.get()) == "from-B", "b's caller got \(b2)")
        #expect((try? a1.get()) == "from-A", "a's caller got \(a1)")
        _ = popped
        await a.close(); await b.close(); await server.kill()
    }

    /// Handler → queue → timer-arming closure → handler: a closed
    /// connection's handler, queue and channel must still be freed.
    @Test func aClosedConnectionIsFreed() async throws {
        let server = try await RedisServer()
        weak var channel: (any Channel)?
        do {
            let connection = try await RedisConnection.connect(try RedisConfiguration(url: server.url),
                                                               group: MultiThreadedEventLoopGroup.singleton)
            channel = connection.channel
            #expect(try await Self.echo(connection, "hi") == "hi")
            await connection.close()
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(await poll { channel == nil }, "the closed connection's channel is still alive")
        await server.kill()
    }
}

struct Versioned: Codable, Equatable, Sendable, CacheCost { var n: Int; var cacheCost: Int { 8 } }

final class CountingOrigin: CacheLevel, Sendable {
    let reads = Atomic<Int>(0)
    func getIfPresent(_ key: String) async throws -> Versioned? {
        reads.add(1, ordering: .relaxed)
        return Versioned(n: 2)
    }
    func set(_ value: Versioned, forKey key: String) async throws {}
    func remove(_ key: String) async throws {}
    func clear() async {}
    func onMemoryWarning() async {}
}

extension RedisRequestPathRegressionTests {
    /// A value in Redis this version cannot decode (an older format) reads
    /// as a miss; the back-fill from the origin still fills the level above
    /// (a plain `SET NX` was declined, memory was not written either, and
    /// every read went to the origin until the Redis key expired).
    @Test func anUndecodableValueInRedisDoesNotStopTheLevelsFromBeingFilled() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, Versioned>(url: server.url, prefix: "rv:", invalidatesLevelsAbove: false)
        let memory = MemoryCacheLevel<String, Versioned>(capacity: 1 << 20)
        let origin = CountingOrigin()
        let cache = memory + redis + origin
        #expect(try await redisCLI(server, "SET", "rv:k", "{\"old-format\":true}").contains("OK"))
        for _ in 0..<3 {
            #expect(try await cache.getIfPresent("k") == Versioned(n: 2))
            await cache.waitForPendingWrites()
        }
        #expect(origin.reads.load(ordering: .relaxed) == 1, "origin read \(origin.reads.load(ordering: .relaxed)) times")
        #expect(memory.value(forKey: "k") == Versioned(n: 2), "memory never back-filled")
        await redis.shutdown(); await server.kill()
    }
}
