import NIOCore
import Synchronization

/// One command on its way: its encoded bytes and where its reply goes.
struct RedisRequest: Sendable {
    let bytes: ByteBuffer
    let reply: ReplySlot
}

/// A reply destination that can be completed once (by the reply, a timeout,
/// a closed connection or a cancelled caller, whichever comes first).
final class ReplySlot: Sendable {
    let promise: EventLoopPromise<RESPValue>
    private let done = Atomic<Bool>(false)

    init(promise: EventLoopPromise<RESPValue>) { self.promise = promise }

    func succeed(_ value: RESPValue) {
        if !done.exchange(true, ordering: .acquiringAndReleasing) { promise.succeed(value) }
    }

    func fail(_ error: any Error) {
        if !done.exchange(true, ordering: .acquiringAndReleasing) { promise.fail(error) }
    }
}

/// Decodes RESP2 replies from the byte stream.
struct RESPDecoder: ByteToMessageDecoder {
    typealias InboundOut = RESPValue

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let value = try RESPParser.parse(&buffer) else { return .needMoreData }
        context.fireChannelRead(Self.wrapInboundOut(value))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }
}

/// Pipelining: writes go out as they come; replies are matched to requests
/// in order (RESP2 answers in order). A closed connection fails every
/// request still waiting.
final class RedisCommandHandler: ChannelDuplexHandler {
    typealias InboundIn = RESPValue
    typealias OutboundIn = RedisRequest
    typealias OutboundOut = ByteBuffer

    private var waiting = CircularBuffer<ReplySlot>()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = Self.unwrapOutboundIn(data)
        waiting.append(request.reply)
        context.write(Self.wrapOutboundOut(request.bytes), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let value = Self.unwrapInboundIn(data)
        guard let slot = waiting.popFirst() else {
            context.fireErrorCaught(RedisError.protocolError("a reply nobody asked for"))
            context.close(promise: nil)
            return
        }
        slot.succeed(value)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(RedisError.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(error is RedisError ? error : RedisError.protocolError("\(error)"))
        context.close(promise: nil)
    }

    private func failAll(_ error: any Error) {
        while let slot = waiting.popFirst() { slot.fail(error) }
    }
}
