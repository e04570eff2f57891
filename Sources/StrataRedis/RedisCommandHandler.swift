import NIOCore

/// Pipelining: writes go out as they come; replies are matched to requests
/// in order (Redis answers in order). Push frames (RESP3) are not replies and
/// travel on down the pipeline. A closed connection fails every request still
/// waiting; an invalid reply fails them with ``RedisError/invalidReply(_:)``
/// and closes the connection.
final class RedisCommandHandler: ChannelDuplexHandler {
    typealias InboundIn = RESPValue
    typealias InboundOut = RESPValue
    typealias OutboundIn = RedisRequest
    typealias OutboundOut = ByteBuffer

    private var waiting = CircularBuffer<PendingReplies>()

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = Self.unwrapOutboundIn(data)
        for replies in request.replies { waiting.append(replies) }
        context.write(Self.wrapOutboundOut(request.bytes), promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let value = Self.unwrapInboundIn(data)
        if case .push = value {
            context.fireChannelRead(data)
            return
        }
        guard let slot = waiting.popFirst() else {
            closeAndFailAll(context: context, RedisError.protocolError("a reply nobody asked for"))
            return
        }
        slot.deliver(value)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(RedisError.connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case let error as RESPParseError: closeAndFailAll(context: context, RedisError.invalidReply(error))
        case let error as RedisError: closeAndFailAll(context: context, error)
        default: closeAndFailAll(context: context, RedisError.protocolError("\(error)"))
        }
    }

    /// Closes first, so a caller that retries as soon as it fails already
    /// finds this connection inactive and does not write to it.
    private func closeAndFailAll(context: ChannelHandlerContext, _ error: RedisError) {
        var pending = CircularBuffer<PendingReplies>()
        swap(&pending, &waiting)
        context.close(promise: nil)
        while let slot = pending.popFirst() { slot.fail(error) }
    }

    private func failAll(_ error: RedisError) {
        while let slot = waiting.popFirst() { slot.fail(error) }
    }
}
