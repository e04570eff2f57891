import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
@testable import StrataRedis
import Synchronization
import Testing

/// A fake Redis on loopback that answers as `respond` says: garbage, replies
/// split byte by byte, extra replies, push frames, closes mid-reply, stalls.
final class HostileServer: Sendable {
    enum Action: Sendable {
        /// Bytes to write, one write (and flush) per element.
        case write([[UInt8]])
        /// Writes, then closes the connection.
        case writeAndClose([UInt8])
        /// No answer.
        case silent
    }

    /// Given a command (its arguments as text) and the connection's number (from 0).
    typealias Responder = @Sendable (_ command: [String], _ connection: Int) -> Action

    let channel: any Channel
    private final class Tally: Sendable { let value = Atomic<Int>(0) }
    private let tally = Tally()
    /// Connections accepted so far.
    var accepted: Int { tally.value.load(ordering: .relaxed) }

    var port: Int { channel.localAddress!.port! }
    var url: String { "redis://127.0.0.1:\(port)" }

    private let children = Locked<[any Channel]>([])

    /// - Parameter readsPaused: reads nothing until ``resumeReading()`` (the client's socket fills).
    init(readsPaused: Bool = false, _ respond: @escaping Responder) async throws {
        let tally = self.tally
        let children = self.children
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: !readsPaused)
            .childChannelOption(.socketOption(.so_rcvbuf), value: 4096)
            .childChannelInitializer { child in
                children.value.withLock { $0.append(child) }
                let number = tally.value.wrappingAdd(1, ordering: .relaxed).oldValue
                return child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(Handler(respond: respond, number: number))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func close() async {
        try? await channel.close()
        for child in children.value.withLock({ $0 }) { try? await child.close() }
    }

    func resumeReading() {
        for child in children.value.withLock({ $0 }) {
            child.setOption(.autoRead, value: true).whenSuccess { child.read() }
        }
    }

    final class Handler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let respond: Responder
        let number: Int
        var decoder = RESPDecoder()

        init(respond: @escaping Responder, number: Int) {
            self.respond = respond
            self.number = number
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            decoder.feed(unwrapInboundIn(data))
            while let value = try? decoder.next() {
                guard case .array(let items?) = value else { context.close(promise: nil); return }
                let command = items.map { $0.bytes.map { String(decoding: $0, as: UTF8.self) } ?? "" }
                switch respond(command, number) {
                case .write(let chunks):
                    for chunk in chunks { context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: chunk)), promise: nil) }
                case .writeAndClose(let bytes):
                    // Written, then closed: the channel's writes complete in order.
                    context.write(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
                    context.flush()
                    context.close(mode: .all, promise: nil)
                    return
                case .silent:
                    break
                }
            }
        }
        typealias OutboundOut = ByteBuffer
    }
}

final class Locked<T: Sendable>: Sendable {
    let value: Mutex<T>
    init(_ initial: T) { value = Mutex(initial) }
}

/// Makes the event loops exist (their descriptors are opened on first use).
enum RedisServerWarmUp {
    static func group() async throws -> Bool {
        try await MultiThreadedEventLoopGroup.singleton.next().submit { true }.get()
    }
}

func bulk(_ text: String) -> String { "$\(text.utf8.count)\r\n\(text)\r\n" }
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
/// `text` as one write per byte.
func split(_ text: String) -> [[UInt8]] { text.utf8.map { [$0] } }


@Suite(.serialized) struct HostileServerTests {
    func client(_ server: HostileServer, timeout: Duration = .seconds(2), connections: Int = 1) throws -> RedisClient {
        RedisClient(configuration: try RedisConfiguration(url: server.url, connections: connections, commandTimeout: timeout))
    }

    /// A reply split across reads (each read ending inside the next reply,
    /// as a server that streams replies without pause makes them) must not
    /// keep every byte ever received: the decoder's buffer stays bounded.
    @Test func theDecoderDoesNotKeepConsumedBytesWhenEveryReadEndsMidReply() async throws {
        try await offThePool {
            var decoder = RESPDecoder()
            let value = String(repeating: "v", count: 100)
            let reply = bulk(value)
            let whole = bytes(reply)
            let half = whole.count / 2
            decoder.feed(ByteBuffer(bytes: whole[..<half]))
            for _ in 0..<20_000 {
                // The rest of one reply and the first half of the next, in one read.
                decoder.feed(ByteBuffer(bytes: Array(whole[half...]) + Array(whole[..<half])))
                guard case .bulkString(let buffer?) = try decoder.next(), String(buffer: buffer) == value else {
                    Issue.record("wrong reply"); return
                }
                #expect(try decoder.next() == nil)
            }
            let buffered = Mirror(reflecting: decoder).children.first { $0.label == "buffered" }?.value as? ByteBuffer
            #expect(buffered != nil)
            // 20,000 replies of ~107 bytes went through: ~2 MB if nothing is discarded.
            #expect((buffered?.capacity ?? .max) < 64 * 1024, "decoder holds \(buffered?.capacity ?? -1) bytes for \(buffered?.readableBytes ?? -1) unread")
        }
    }

    static func get(_ client: RedisClient, _ key: String) async throws -> String? {
        guard case .bulkString(let buffer?) = try await client.send(["GET", key].map { Array($0.utf8) }) else { return nil }
        return String(buffer: buffer)
    }

    /// 32 callers at once; each must get the reply to its own request.
    static func concurrentGets(_ client: RedisClient, onTheLoop: Bool) async throws -> [String: String?] {
        func run() async throws -> [String: String?] {
            try await withThrowingTaskGroup(of: (String, String?).self) { group in
                for index in 0..<32 {
                    group.addTask { ("k\(index)", try await get(client, "k\(index)")) }
                }
                var results: [String: String?] = [:]
                for try await (key, value) in group { results[key] = value }
                return results
            }
        }
        return onTheLoop ? try await withTaskExecutorPreference(client.taskExecutor) { try await run() } : try await run()
    }

    @Test(arguments: [false, true])
    func repliesSplitByteByByteAndPushFramesBetweenReachTheirOwnCallers(onTheLoop: Bool) async throws {
        _ = try await RedisServerWarmUp.group()
        let server = try await HostileServer { command, _ in
            guard command.first == "GET", command.count == 2 else { return .write([bytes("-ERR unknown\r\n")]) }
            return .write(split(">2\r\n+invalidate\r\n*1\r\n$1\r\nx\r\n" + bulk("value of " + command[1])))
        }
        let client = try client(server, connections: 2)
        for round in 0..<3 {
            let results = try await Self.concurrentGets(client, onTheLoop: onTheLoop)
            for (key, value) in results { #expect(value == "value of \(key)", "round \(round)") }
        }
        #expect(server.accepted == 2)
        let port = server.port
        await client.shutdown()
        await server.close()
        #expect(await poll { socketsTo(port) == 0 }, "\(socketsTo(port)) sockets to the server left open")
    }

    @Test func garbageFailsTheCallersAndTheNextRequestGetsANewConnection() async throws {
        let server = try await HostileServer { command, connection in
            connection == 0 ? .write([bytes("?garbage\r\n")]) : .write([bytes(bulk("value of " + command[1]))])
        }
        let client = try client(server)
        await #expect(throws: RedisError.self) { try await Self.get(client, "a") }
        #expect(try await Self.get(client, "b") == "value of b")
        #expect(server.accepted == 2)
        let port = server.port
        await client.shutdown()
        await server.close()
        #expect(await poll { socketsTo(port) == 0 }, "\(socketsTo(port)) sockets to the server left open")
    }

    @Test func anExtraReplyClosesTheConnection() async throws {
        let server = try await HostileServer { command, connection in
            connection == 0 ? .write([bytes(bulk("value of " + command[1]) + bulk("extra"))]) : .write([bytes(bulk("value of " + command[1]))])
        }
        let client = try client(server)
        let conn = try await client.connection()
        #expect(try await Self.get(client, "a") == "value of a")
        // The extra reply, with nothing waiting, closes the connection: the next request gets its own reply on a new one.
        #expect(await poll { !conn.isActive })
        #expect(try await Self.get(client, "b") == "value of b")
        #expect(server.accepted == 2)
        await client.shutdown()
        await server.close()
    }

    @Test func aConnectionClosedMidTransactionFailsItAndIsReplaced() async throws {
        let server = try await HostileServer { command, connection in
            switch command.first {
            case "MULTI": return .write([bytes("+OK\r\n")])
            case "GET", "PTTL": return .write([bytes("+QUEUED\r\n")])
            case "EXEC" where connection == 0: return .writeAndClose(bytes("*2\r\n$5\r\nval"))
            case "EXEC" where connection == 1: return .write([bytes("*1\r\n" + bulk("only one"))])  // one result for two commands
            case "EXEC": return .write([bytes("*2\r\n" + bulk("v") + ":100\r\n")])
            default: return .write([bytes("-ERR\r\n")])
            }
        }
        let client = try client(server)
        let commands = [["GET", "k"], ["PTTL", "k"]].map { $0.map { Array($0.utf8) } }
        await #expect(throws: RedisError.connectionClosed) { try await client.send(transaction: commands) }
        // EXEC's reply does not match the transaction: the stream cannot be
        // trusted, so the connection is replaced.
        await #expect(throws: RedisError.self) { try await client.send(transaction: commands) }
        let replies = try await client.send(transaction: commands)
        #expect(replies.count == 2)
        #expect(replies.last == .integer(100))
        #expect(server.accepted == 3)
        await client.shutdown()
        await server.close()
    }

    @Test(arguments: [false, true])
    func aSilentServerFailsEveryCallerWithinTheTimeoutAndIsReplaced(onTheLoop: Bool) async throws {
        let server = try await HostileServer { command, connection in
            connection == 0 ? .silent : .write([bytes(bulk("value of " + command[1]))])
        }
        let client = try client(server, timeout: .milliseconds(300))
        let started = ContinuousClock.now
        let outcome = await Result { try await Self.concurrentGets(client, onTheLoop: onTheLoop) }
        #expect(ContinuousClock.now - started < .seconds(2))
        guard case .failure(let error) = outcome else { Issue.record("answered \(outcome)"); return }
        #expect(error as? RedisError == .timeout || error as? RedisError == .connectionClosed, "\(error)")
        let results = try await Self.concurrentGets(client, onTheLoop: onTheLoop)
        for (key, value) in results { #expect(value == "value of \(key)") }
        let port = server.port
        await client.shutdown()
        await server.close()
        #expect(await poll { socketsTo(port) == 0 }, "\(socketsTo(port)) sockets to the server left open")
    }
}

import StrataTestSupport

@Suite(.serialized) struct RedisClientKillTests {
    /// 16 tasks set and read their own keys while the data connections are
    /// killed by `CLIENT KILL` again and again: each read answers its own
    /// key's value or fails, never another's.
    @Test(arguments: [false, true])
    func killedConnectionsNeverAnswerAnotherCaller(onTheLoop: Bool) async throws {
        let server = try await RedisServer()
        let client = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 2, commandTimeout: .seconds(2)))
        let wrong = Locked<[String]>([])
        func run() async {
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<16 {
                    group.addTask {
                        for round in 0..<200 {
                            let key = "t\(task)", value = "\(task)-\(round)"
                            guard (try? await client.send("SET", key, value)) != nil else { continue }
                            guard let reply = try? await client.send("GET", key) else { continue }
                            if case .bulkString(let buffer?) = reply, String(buffer: buffer) == value { continue }
                            wrong.value.withLock { $0.append("\(key): \(reply) for \(value)") }
                        }
                    }
                }
                group.addTask {
                    for _ in 0..<20 { _ = try? await redisCLI(server, "CLIENT", "KILL", "TYPE", "normal") }
                }
            }
        }
        if onTheLoop { await withTaskExecutorPreference(client.taskExecutor) { await run() } } else { await run() }
        #expect(wrong.value.withLock { $0 }.isEmpty, "\(wrong.value.withLock { $0.prefix(5) })")
        await client.shutdown()
        await server.kill()
    }
}
