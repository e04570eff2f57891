import NIOCore
import NIOPosix
import Synchronization

/// One connection: requests are pipelined; each has a deadline, and a
/// request that misses it closes the connection (its late reply would
/// otherwise be read as the answer to the next request).
final class RedisConnection: Sendable {
    let channel: any Channel
    let queue: RedisRequestQueue
    let timeout: Duration
    private let closed = Atomic<Bool>(false)

    init(channel: any Channel, queue: RedisRequestQueue, timeout: Duration) {
        self.channel = channel
        self.queue = queue
        self.timeout = timeout
    }

    /// A connection dropped unclosed closes its channel: NIO's event loop
    /// keeps a registered channel, and its socket, open until someone closes
    /// it, and nobody else can once this (its only handle) is gone. Every
    /// owner closes its connections itself (``RedisClient``'s deinit and
    /// `shutdown()`, the invalidation subscriber's loop); this is the
    /// backstop. Nothing can be in flight: a request is sent and awaited
    /// inside ``send(batch:cancellable:)``, whose caller holds the connection.
    /// A channel already inactive is closed or closing (or its loop shut
    /// down): it is left alone.
    deinit {
        if !closed.load(ordering: .acquiring), channel.isActive { channel.close(promise: nil) }
    }

    var isActive: Bool { channel.isActive && !queue.isClosed && !closed.load(ordering: .relaxed) }

    /// Connects, authenticates and selects the database. Push frames (RESP3)
    /// go to `pushes` when given (and are dropped otherwise); it is finished
    /// when the connection closes.
    static func connect(_ configuration: RedisConfiguration, group: any EventLoopGroup,
                        pushes: AsyncStream<RESPValue>.Continuation? = nil) async throws -> RedisConnection {
        let timeout = TimeAmount.nanoseconds(configuration.commandTimeout.nanosecondsClamped)
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.nanoseconds(configuration.connectTimeout.nanosecondsClamped))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let queue = RedisRequestQueue(channel: channel, timeout: timeout)
                    try channel.pipeline.syncOperations.addHandler(RedisCommandHandler(queue: queue, limits: configuration.replyLimits))
                    if let pushes { try channel.pipeline.syncOperations.addHandler(RedisPushHandler(pushes)) }
                }
            }
        var connected: (any Channel)?
        let channel: any Channel
        let queue: RedisRequestQueue
        do {
            channel = try await bootstrap.connect(host: configuration.host, port: configuration.port).get()
            connected = channel
            queue = try await channel.eventLoop.submit {
                try channel.pipeline.syncOperations.handler(type: RedisCommandHandler.self).queue
            }.get()
        } catch {
            try? await connected?.close()  // connected, but not a connection anyone can close
            pushes?.finish()
            throw RedisError.connectionFailed("\(configuration.host):\(configuration.port): \(Self.words(for: error))")
        }
        if let descriptor = ChannelSocket.duplicateDescriptor(of: channel) { queue.adopt(descriptor: descriptor) }
        let connection = RedisConnection(channel: channel, queue: queue, timeout: configuration.commandTimeout)
        do {
            if let password = configuration.password {
                try connection.expectOK(try await connection.send(["AUTH", password].map { Array($0.utf8) }))
            }
            if configuration.database != 0 {
                try connection.expectOK(try await connection.send(["SELECT", "\(configuration.database)"].map { Array($0.utf8) }))
            }
        } catch {
            await connection.close()
            throw RedisError.connectionFailed("handshake: \(error)")
        }
        return connection
    }

    /// A connect failure in words ("connection refused"), not NIO's types.
    static func words(for error: any Error) -> String {
        func text(_ error: any Error) -> String {
            if let io = error as? IOError { return String(cString: strerror(io.errnoCode)).lowercased() }
            if case ChannelError.connectTimeout(let limit) = error { return "no answer within \(limit.nanoseconds / 1_000_000) ms" }
            return "\(error)"
        }
        guard let connection = error as? NIOConnectionError else { return text(error) }
        let reasons = connection.connectionErrors.map { text($0.error) }
        if reasons.isEmpty { return "cannot resolve the host" }
        return reasons.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }.joined(separator: "; ")
    }

    func expectOK(_ reply: RESPValue) throws {
        guard case .simpleString("OK") = reply else { throw RedisError.protocolError("expected OK, got \(reply)") }
    }

    /// Sends one command and waits for its reply. Server errors come back as
    /// ``RESPValue/error(_:)``; the caller decides.
    func send(_ arguments: [[UInt8]]) async throws -> RESPValue {
        try await send(batch: [arguments])[0]
    }

    /// Sends `commands` in one write (one round trip) and waits for their
    /// replies, in order. One deadline covers them; if it passes the
    /// connection is closed. Server errors come back as ``RESPValue/error(_:)``.
    ///
    /// The commands are encoded and written on the caller's thread (see
    /// ``RedisRequestQueue``); commands sent meanwhile by others share the write.
    ///
    /// With `cancellable` false, a caller cancelled meanwhile still waits for
    /// the replies (bounded by the command timeout): for writes, whose effect
    /// must be known before they are reported (see `RedisCacheLevel`).
    func send(batch commands: [[[UInt8]]], cancellable: Bool = true) async throws -> [RESPValue] {
        if commands.isEmpty { return [] }  // no reply would ever complete it
        let replies = PendingReplies(count: commands.count)
        guard cancellable else {
            return try await withUnsafeThrowingContinuation { enqueue(commands, replies, $0) }
        }
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { enqueue(commands, replies, $0) }
        } onCancel: {
            replies.fail(CancellationError())  // replies to commands already sent are still read, in order, and dropped
        }
    }

    /// Queues `commands`; `continuation` gets `replies`. (Not an async
    /// function of its own: one more async frame per request measured.)
    private func enqueue(_ commands: [[[UInt8]]], _ replies: PendingReplies,
                         _ continuation: UnsafeContinuation<[RESPValue], any Error>) {
        replies.wait(for: continuation)
        if replies.isComplete { return }  // cancelled before sending: nothing to send
        queue.submit(replies: replies, count: commands.count) { buffer in
            for command in commands { RESPEncoder.encode(command, into: &buffer) }
        }
    }

    /// Closes the channel; only the first call does anything.
    func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try? await channel.close()
    }

    /// ``close()`` without waiting for it. A channel already inactive is
    /// closed or closing: it is left alone (its loop may have shut down, and
    /// NIO drops, with an error, work given to a loop that has).
    func closeSoon() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing), channel.isActive else { return }
        channel.close(promise: nil)
    }
}

extension Duration {
    /// Whole nanoseconds, saturating (from the full-width attoseconds:
    /// `components` traps beyond `Int64.max` seconds).
    var nanosecondsClamped: Int64 {
        let nanoseconds = attoseconds / 1_000_000_000
        return nanoseconds > Int128(Int64.max) ? .max : nanoseconds < Int128(Int64.min) ? .min : Int64(nanoseconds)
    }
}
