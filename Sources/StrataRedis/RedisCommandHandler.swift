import NIOCore

/// Pipelining: writes go out as they come; replies are decoded here (see
/// ``RESPDecoder``) and matched to requests in order (Redis answers in
/// order). Push frames (RESP3) are not replies and travel on down the
/// pipeline. A closed connection fails every request still
/// waiting; an invalid reply fails them with ``RedisError/invalidReply(_:)``
/// and closes the connection.
///
/// Deadlines: every request must be answered within `timeout` of its write.
/// Since answers come in order, only the oldest request waiting can be the
/// first to miss its deadline, so one timer serves them all (re-armed for the
/// oldest one when it fires). A request that misses it fails with
/// ``RedisError/timeout`` and the connection is closed, never reused: its
/// late reply would otherwise be read as the answer to the next request.
final class RedisCommandHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = RESPValue
    typealias OutboundIn = RedisRequest
    typealias OutboundOut = ByteBuffer

    private struct Waiting {
        let replies: PendingReplies
        let deadline: NIODeadline
    }

    private var waiting = CircularBuffer<Waiting>()
    private let timeout: TimeAmount?
    private var timer: Scheduled<Void>?
    private var decoder: RESPDecoder

    /// - Parameters:
    ///   - timeout: how long a request may wait for its reply; `nil`: for ever.
    ///   - limits: the largest reply accepted (a larger one is an invalid reply).
    init(timeout: TimeAmount? = nil, limits: RESPLimits = .default) {
        self.timeout = timeout
        self.decoder = RESPDecoder(limits: limits)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = Self.unwrapOutboundIn(data)
        let deadline = timeout.map { context.eventLoop.now + $0 } ?? .distantFuture
        for replies in request.replies { waiting.append(Waiting(replies: replies, deadline: deadline)) }
        if timer == nil, timeout != nil { arm(context: context, at: deadline) }
        context.write(Self.wrapOutboundOut(request.bytes), promise: promise)
    }

    private func arm(context: ChannelHandlerContext, at deadline: NIODeadline) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            handler.timerFired(context: context)
        }
    }

    private func timerFired(context: ChannelHandlerContext) {
        timer = nil
        guard let oldest = waiting.first else { return }
        guard oldest.deadline <= context.eventLoop.now else {
            arm(context: context, at: oldest.deadline)
            return
        }
        waiting.removeFirst()
        closeAndFailAll(context: context, RedisError.connectionClosed)  // closes first: a retry finds it inactive
        oldest.replies.fail(RedisError.timeout)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        decoder.feed(Self.unwrapInboundIn(data))
        while true {
            let value: RESPValue
            do {
                guard let next = try decoder.next() else { return }
                value = next
            } catch {
                closeAndFailAll(context: context, RedisError.invalidReply(error))
                return
            }
            if case .push = value {
                context.fireChannelRead(Self.wrapInboundOut(value))
                continue
            }
            guard let slot = waiting.popFirst() else {
                closeAndFailAll(context: context, RedisError.protocolError("a reply nobody asked for"))
                return
            }
            slot.replies.deliver(value)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(RedisError.connectionClosed)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case let error as RedisError: closeAndFailAll(context: context, error)
        default: closeAndFailAll(context: context, RedisError.protocolError("\(error)"))
        }
    }

    /// Closes first, so a caller that retries as soon as it fails already
    /// finds this connection inactive and does not write to it.
    private func closeAndFailAll(context: ChannelHandlerContext, _ error: RedisError) {
        var pending = CircularBuffer<Waiting>()
        swap(&pending, &waiting)
        context.close(promise: nil)
        while let slot = pending.popFirst() { slot.replies.fail(error) }
    }

    private func failAll(_ error: RedisError) {
        timer?.cancel()
        timer = nil
        while let slot = waiting.popFirst() { slot.replies.fail(error) }
    }
}
