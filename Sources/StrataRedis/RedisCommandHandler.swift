import NIOCore

/// The read side of a connection: replies are decoded here (see
/// ``RESPDecoder``) and matched, in order (Redis answers in order), to the
/// requests ``RedisRequestQueue`` sent. Push frames (RESP3) are not replies
/// and travel on down the pipeline. A closed connection fails every request
/// still waiting; an invalid reply fails them with
/// ``RedisError/invalidReply(_:)`` and closes the connection.
///
/// Deadlines: every request must be answered within the queue's `timeout`
/// of its submission. Since answers come in order, only the oldest request
/// waiting can be the first to miss its deadline, so one timer serves them
/// all (re-armed for the oldest one when it fires, and kept ticking while
/// requests keep coming, so a caller seldom has to wake the loop to arm it).
/// A request that misses its deadline fails with ``RedisError/timeout`` and
/// the connection is closed, never reused: its late reply would otherwise be
/// read as the answer to the next request.
final class RedisCommandHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = RESPValue

    let queue: RedisRequestQueue
    private var timer: Scheduled<Void>?
    private var decoder: RESPDecoder

    /// - Parameter limits: the largest reply accepted (a larger one is an invalid reply).
    init(queue: RedisRequestQueue, limits: RESPLimits = .default) {
        self.queue = queue
        self.decoder = RESPDecoder(limits: limits)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let loop = context.eventLoop
        queue.setTimerArming {
            loop.execute {
                let (handler, context) = bound.value
                handler.armRequested(context: context)
            }
        }
    }

    private func armRequested(context: ChannelHandlerContext) {
        guard timer == nil, let deadline = queue.firstDeadline() else { return }
        arm(context: context, at: deadline)
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
        switch queue.timerFired(now: context.eventLoop.now) {
        case .expired(let oldest):
            closeAndFailAll(context: context, RedisError.connectionClosed, timedOut: oldest)
        case .rearm(let deadline):
            arm(context: context, at: deadline)
        case .disarm:
            break
        }
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
            // A push may come with attributes before it (RESP3 allows it): it
            // is still a push, not the next caller's reply. Taken for one, it
            // shifted every later reply onto the wrong caller.
            if case .push = value {
                context.fireChannelRead(Self.wrapInboundOut(value))
                continue
            }
            if case .attributed = value, case .push = value.withoutAttributes {
                context.fireChannelRead(Self.wrapInboundOut(value.withoutAttributes))
                continue
            }
            guard let replies = queue.popReplies() else {
                closeAndFailAll(context: context, RedisError.protocolError("a reply nobody asked for"))
                return
            }
            replies.deliver(value)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        queue.setTimerArming(nil)  // it holds this handler: the two would keep each other alive
        for replies in queue.close() { replies.fail(RedisError.connectionClosed) }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
        queue.setTimerArming(nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case let error as RedisError: closeAndFailAll(context: context, error)
        // After the handshake too: TLS 1.3 servers refuse a client certificate (or its lack) then.
        case let error where RedisTLS.isTLSError(error):
            closeAndFailAll(context: context, RedisError.tlsFailed(RedisTLS.words(for: error, host: "the server")))
        default: closeAndFailAll(context: context, RedisError.protocolError("\(error)"))
        }
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }

    /// Closes the queue and the channel first, so a caller that retries as
    /// soon as it fails already finds this connection closed.
    /// `timedOut` (the request whose deadline passed) fails with `timeout`
    /// before the rest: a batch waits in the queue once per command, and its
    /// later copies must not fail it with `error` first.
    private func closeAndFailAll(context: ChannelHandlerContext, _ error: RedisError, timedOut: PendingReplies? = nil) {
        cancelTimer()
        let pending = queue.close()
        context.close(promise: nil)
        timedOut?.fail(RedisError.timeout)
        for replies in pending { replies.fail(error) }
    }
}
