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

    init(_ respond: @escaping Responder) async throws {
        let tally = self.tally
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                let number = tally.value.wrappingAdd(1, ordering: .relaxed).oldValue
                return child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(Handler(respond: respond, number: number))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func close() async { try? await channel.close() }

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
                    context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes))).whenComplete { _ in
                        context.close(promise: nil)
                    }
                    return
                case .silent:
                    break
                }
            }
        }
        typealias OutboundOut = ByteBuffer
    }
}

func bulk(_ text: String) -> String { "$\(text.utf8.count)\r\n\(text)\r\n" }
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
/// `text` as one write per byte.
func split(_ text: String) -> [[UInt8]] { text.utf8.map { [$0] } }

/// Open descriptors of this process.
func openDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
}

@Suite(.serialized) struct HostileServerTests {
    func client(_ server: HostileServer, timeout: Duration = .seconds(2), connections: Int = 1) throws -> RedisClient {
        RedisClient(configuration: try RedisConfiguration(url: server.url, connections: connections, commandTimeout: timeout))
    }

    /// A reply split across reads (each read ending inside the next reply,
    /// as a server that streams replies without pause makes them) must not
    /// keep every byte ever received: the decoder's buffer stays bounded.
    @Test func theDecoderDoesNotKeepConsumedBytesWhenEveryReadEndsMidReply() throws {
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
