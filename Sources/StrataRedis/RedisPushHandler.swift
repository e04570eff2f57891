import NIOCore

/// The last handler of a connection that receives RESP3 push frames (the
/// ones ``RedisCommandHandler`` passes on): hands them to an `AsyncStream`,
/// and finishes it when the connection closes. If the stream's buffer is
/// full (its reader fell far behind), the push is lost, so the connection is
/// closed: its owner treats that as "anything may have changed".
final class RedisPushHandler: ChannelInboundHandler {
    typealias InboundIn = RESPValue

    private let pushes: AsyncStream<RESPValue>.Continuation

    init(_ pushes: AsyncStream<RESPValue>.Continuation) { self.pushes = pushes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .dropped = pushes.yield(Self.unwrapInboundIn(data)) { context.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        pushes.finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { pushes.finish() }
}
