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
    /// Set before a connection that must not be reused fails its caller, so a
    /// caller that retries at once is given another connection.
    private let retired = Atomic<Bool>(false)

    init(channel: any Channel, timeout: Duration) {
        self.channel = channel
        self.timeout = timeout
    }

    var isActive: Bool { channel.isActive && !retired.load(ordering: .acquiring) }

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
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(RESPDecoder(limits: configuration.replyLimits)))
                    try channel.pipeline.syncOperations.addHandler(RedisCommandHandler())
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

    /// Sends `commands` in one write (one flush, so one round trip) and waits
    /// for their replies, in order. One deadline covers the batch; if it passes
    /// the connection is closed. Server errors come back as ``RESPValue/error(_:)``.
    func send(batch commands: [[[UInt8]]]) async throws -> [RESPValue] {
        let channel = self.channel
        let slots = commands.map { _ in ReplySlot(promise: channel.eventLoop.makePromise(of: RESPValue.self)) }
        let deadline = channel.eventLoop.scheduleTask(in: .nanoseconds(timeout.nanosecondsClamped)) { [self] in
            retired.store(true, ordering: .releasing)  // never reuse: the late reply would answer the next caller
            for slot in slots { slot.fail(RedisError.timeout) }
            channel.close(promise: nil)
        }
        if slots.count == 1 {
            slots[0].promise.futureResult.whenComplete { _ in deadline.cancel() }
        } else {
            EventLoopFuture.andAllComplete(slots.map(\.promise.futureResult), on: channel.eventLoop)
                .whenComplete { _ in deadline.cancel() }
        }
        for (arguments, slot) in zip(commands, slots) {
            var buffer = channel.allocator.buffer(capacity: 64 + arguments.reduce(0) { $0 + $1.count + 16 })
            RESPEncoder.encode(arguments, into: &buffer)
            channel.write(RedisRequest(bytes: buffer, reply: slot)).whenFailure { error in
                slot.fail(channel.isActive ? RedisError.protocolError("\(error)") : RedisError.connectionClosed)
            }
        }
        channel.flush()
        return try await withTaskCancellationHandler {
            var replies: [RESPValue] = []
            replies.reserveCapacity(slots.count)
            for slot in slots { replies.append(try await slot.promise.futureResult.get()) }
            return replies
        } onCancel: {
            for slot in slots { slot.fail(CancellationError()) }  // their replies are still read, in order, and dropped
        }
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
