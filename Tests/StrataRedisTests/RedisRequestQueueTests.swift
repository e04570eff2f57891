import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// Requests written on the callers' threads (``RedisRequestQueue``) against
/// a real `redis-server`: replies stay matched to their requests under
/// concurrency, a full socket hands the rest to NIO without reordering, and
/// the connection's own descriptor is closed with it.
@Suite(.serialized) struct RedisRequestQueueTests {
    func connect(_ server: RedisServer, timeout: Duration = .seconds(10)) async throws -> RedisConnection {
        try await RedisConnection.connect(try RedisConfiguration(url: server.url, commandTimeout: timeout),
                                          group: MultiThreadedEventLoopGroup.singleton)
    }

    static func echo(_ connection: RedisConnection, _ text: String) async throws -> String? {
        guard case .bulkString(let buffer?) = try await connection.send([Array("ECHO".utf8), Array(text.utf8)]) else { return nil }
        return String(buffer: buffer)
    }

    @Test(arguments: [false, true])
    func everyCallerGetsTheReplyToItsOwnRequestUnderConcurrency(onTheLoop: Bool) async throws {
        let server = try await RedisServer()
        let connection = try await connect(server)
        #expect(connection.queue.hasDescriptor, "writes go through the connection's own descriptor")
        // On the loop (``EventLoopTaskExecutor``) the loop writes once per
        // tick, and sends early once 8 requests are queued.
        let executor: (any TaskExecutor)? = onTheLoop ? EventLoopTaskExecutor(group: MultiThreadedEventLoopGroup.singleton) : nil
        let wrong = await withTaskGroup(of: Int.self) { group in
            for task in 0..<32 {
                group.addTask(executorPreference: executor) {
                    var wrong = 0
                    for i in 0..<500 {
                        let text = "t\(task)-\(i)-" + String(repeating: "x", count: (task * 37 + i) % 200)
                        if (try? await Self.echo(connection, text)) != text { wrong += 1 }
                        if i % 50 == 0 {  // batches interleave with single sends
                            let replies = try? await connection.send(batch: [[Array("ECHO".utf8), Array("a\(task)".utf8)],
                                                                             [Array("ECHO".utf8), Array("b\(task)".utf8)]])
                            if replies != [.bulkString(ByteBuffer(string: "a\(task)")), .bulkString(ByteBuffer(string: "b\(task)"))] {
                                wrong += 1
                            }
                        }
                    }
                    return wrong
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
        if onTheLoop { #expect(connection.queue.earlyFlushes.load(ordering: .relaxed) > 0, "the early send was taken") }
        await connection.close()
        await server.kill()
    }

    /// The server stops reading: a large request fills the socket, the rest
    /// goes through NIO, and requests sent after it are written after it.
    @Test func aFullSocketHandsTheRestToNIOWithoutReordering() async throws {
        let server = try await RedisServer()
        let connection = try await connect(server)
        #expect(try await Self.echo(connection, "ready") == "ready")
        kill(server.process.processIdentifier, SIGSTOP)
        let big = [UInt8](repeating: 0x62, count: 16 << 20)
        let set = Task { try await connection.send([Array("SET".utf8), Array("big".utf8), big]) }
        #expect(await poll { connection.queue.handOffs.load(ordering: .relaxed) > 0 }, "the socket filled up")
        let after = Task { try await Self.echo(connection, "after") }
        kill(server.process.processIdentifier, SIGCONT)
        #expect(try await set.value == .simpleString("OK"))
        #expect(try await after.value == "after")
        guard case .bulkString(let stored?) = try await connection.send([Array("GET".utf8), Array("big".utf8)]) else {
            Issue.record("no value")
            return
        }
        let same = stored.withUnsafeReadableBytes { raw in
            big.withUnsafeBytes { raw.count == $0.count && memcmp(raw.baseAddress!, $0.baseAddress!, $0.count) == 0 }
        }
        #expect(same, "the large value arrived whole")
        #expect(try await Self.echo(connection, "direct again") == "direct again")
        await connection.close()
        await server.kill()
    }


    @Test func anEmptyBatchReturnsAtOnce() async throws {
        let server = try await RedisServer()
        let connection = try await connect(server)
        #expect(try await connection.send(batch: []).isEmpty)
        await connection.close()
        await server.kill()
    }

    @Test func closingTheConnectionClosesItsOwnDescriptorToo() async throws {
        let server = try await RedisServer()
        let connection = try await connect(server)
        #expect(try await Self.echo(connection, "hi") == "hi")
        #expect(socketsTo(server.port) == 2, "NIO's descriptor and the connection's duplicate")
        await connection.close()
        #expect(await poll { socketsTo(server.port) == 0 }, "\(socketsTo(server.port)) left open")
        await #expect(throws: RedisError.connectionClosed) { try await Self.echo(connection, "late") }
        await server.kill()
    }

    @Test func aServerThatGoesAwayFailsWaitingRequestsAndClosesTheDescriptor() async throws {
        let server = try await RedisServer()
        let connection = try await connect(server)
        #expect(try await Self.echo(connection, "hi") == "hi")
        kill(server.process.processIdentifier, SIGSTOP)
        let waiting = Task { try await Self.echo(connection, "never answered") }
        #expect(await poll { connection.queue.waitingCount == 1 })
        await server.kill()
        let outcome = await Result { try await waiting.value }
        guard case .failure(let error) = outcome else { Issue.record("answered: \(outcome)"); return }
        #expect(error is RedisError, "\(error)")
        #expect(await poll { socketsTo(server.port) == 0 })
    }
}
