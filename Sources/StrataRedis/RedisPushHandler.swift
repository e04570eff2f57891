import NIOCore

/// The last handler of a connection that receives RESP3 push frames (the
/// ones ``RedisCommandHandler`` passes on): hands them to an `AsyncStream`,
/// and finishes it when the connection closes.
final class RedisPushHandler: ChannelInboundHandler {
    typealias InboundIn = RESPValue

    private let pushes: AsyncStream<RESPValue>.Continuation

    init(_ pushes: AsyncStream<RESPValue>.Continuation) { self.pushes = pushes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pushes.yield(Self.unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        pushes.finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { pushes.finish() }
}
