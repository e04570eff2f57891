import NIOCore
import NIOPosix
import Synchronization

/// One connection: requests are pipelined; each has a deadline, and a
/// request that misses it closes the connection (its late reply would
/// otherwise be read as the answer to the next request).
final class RedisConnection: Sendable {
    let channel: any Channel
    let timeout: Duration
    private let closed = Atomic<Bool>(false)

    init(channel: any Channel, timeout: Duration) {
        self.channel = channel
        self.timeout = timeout
    }

    var isActive: Bool { channel.isActive }

    /// Connects, authenticates and selects the database. Push frames (RESP3)
    /// go to `pushes` when given (and are dropped otherwise); it is finished
    /// when the connection closes.
    static func connect(_ configuration: RedisConfiguration, group: any EventLoopGroup,
                        pushes: AsyncStream<RESPValue>.Continuation? = nil) async throws -> RedisConnection {
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.nanoseconds(configuration.connectTimeout.nanosecondsClamped))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        RedisCommandHandler(timeout: .nanoseconds(configuration.commandTimeout.nanosecondsClamped),
                                            limits: configuration.replyLimits))
                    if let pushes { try channel.pipeline.syncOperations.addHandler(RedisPushHandler(pushes)) }
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: configuration.host, port: configuration.port).get()
        } catch {
            pushes?.finish()
            throw RedisError.connectionFailed("\(configuration.host):\(configuration.port): \(error)")
        }
        CloseOnExec.mark(channel)
        let connection = RedisConnection(channel: channel, timeout: configuration.commandTimeout)
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
    /// Sends from any thread go into an outbox that the event loop drains
    /// once per tick: one hop to the loop and one flush (one `write(2)`) for
    /// every command that arrived meanwhile, and one hand-back per reply set.
    func send(batch commands: [[[UInt8]]]) async throws -> [RESPValue] {
        let replies = PendingReplies(count: commands.count)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                replies.wait(for: continuation)
                enqueue(Outgoing(commands: commands, replies: replies))
            }
        } onCancel: {
            replies.fail(CancellationError())  // replies to commands already sent are still read, in order, and dropped
        }
    }

    private struct Outgoing: Sendable {
        let commands: [[[UInt8]]]
        let replies: PendingReplies
    }

    private struct Outbox {
        var items: [Outgoing] = []
        var drainScheduled = false
    }

    private let outbox = Mutex(Outbox())

    private func enqueue(_ item: Outgoing) {
        let schedule = outbox.withLock { outbox in
            outbox.items.append(item)
            defer { outbox.drainScheduled = true }
            return !outbox.drainScheduled
        }
        if schedule { channel.eventLoop.execute { self.drain() } }
    }

    /// On the event loop: encodes everything in the outbox into one buffer,
    /// and writes and flushes once.
    private func drain() {
        let items = outbox.withLock { outbox in
            defer {
                outbox.items.removeAll(keepingCapacity: true)
                outbox.drainScheduled = false
            }
            return outbox.items
        }
        guard channel.isActive else {
            for item in items { item.replies.fail(RedisError.connectionClosed) }
            return
        }
        var size = 0, count = 0
        for item in items {
            count += item.commands.count
            for command in item.commands { size += 16 + command.reduce(0) { $0 + $1.count + 16 } }
        }
        var buffer = channel.allocator.buffer(capacity: size)
        var targets: [PendingReplies] = []
        targets.reserveCapacity(count)
        for item in items where !item.replies.isComplete {  // a caller cancelled before sending: nothing to send
            for command in item.commands {
                RESPEncoder.encode(command, into: &buffer)
                targets.append(item.replies)
            }
        }
        if targets.isEmpty { return }
        // A failed write closes the channel, and the handler fails whatever waits.
        channel.writeAndFlush(RedisRequest(bytes: buffer, replies: targets), promise: nil)
    }

    /// Closes the channel; only the first call does anything.
    func close() async {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        try? await channel.close()
    }

    /// ``close()`` without waiting for it.
    func closeSoon() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        channel.close(promise: nil)
    }
}

extension Duration {
    var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : scaled &+ attoseconds / 1_000_000_000
    }
}
