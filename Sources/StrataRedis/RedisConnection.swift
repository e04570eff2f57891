import NIOCore
import NIOPosix
import NIOSSL
#if canImport(Glibc)
import Glibc
#endif
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

    /// Connects (over TLS when configured), authenticates and selects the
    /// database. Push frames (RESP3) go to `pushes` when given (and are
    /// dropped otherwise); it is finished when the connection closes.
    ///
    /// Fails with ``RedisError/tlsFailed(_:)`` when the TLS handshake fails,
    /// ``RedisError/authenticationFailed(_:)`` when the server refuses the
    /// credentials, ``RedisError/connectionFailed(_:)`` otherwise.
    static func connect(_ configuration: RedisConfiguration, group: any EventLoopGroup,
                        pushes: AsyncStream<RESPValue>.Continuation? = nil) async throws -> RedisConnection {
        let timeout = TimeAmount.nanoseconds(configuration.commandTimeout.nanosecondsClamped)
        let connectTimeout = TimeAmount.nanoseconds(configuration.connectTimeout.nanosecondsClamped)
        // Made here, not per channel: a file that cannot be read fails before any connect.
        let tls: (context: NIOSSLContext, name: String, hostname: String?)?
        do {
            tls = try configuration.tls.map { settings in
                let name = settings.serverName ?? configuration.host
                return (try settings.makeContext(), name, RedisTLS.serverHostname(name))
            }
        } catch {
            pushes?.finish()
            throw error
        }
        // The queue and the handshake's outcome are handed out of the channel
        // initializer, by channel (a connect may try several addresses), not
        // looked up in the pipeline afterwards: a failed handshake closes the
        // channel, and empties its pipeline, at once.
        let made = ChannelParts()
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    var handshake: EventLoopFuture<Void>?
                    if let tls {
                        try operations.addHandler(NIOSSLClientHandler(context: tls.context, serverHostname: tls.hostname))
                        let done = channel.eventLoop.makePromise(of: Void.self)
                        do { try operations.addHandler(RedisTLSHandshakeHandler(done: done, timeout: connectTimeout)) } catch {
                            done.fail(error)
                            throw error
                        }
                        handshake = done.futureResult
                    }
                    let queue = RedisRequestQueue(channel: channel, timeout: timeout)
                    try operations.addHandler(RedisCommandHandler(queue: queue, limits: configuration.replyLimits))
                    if let pushes { try operations.addHandler(RedisPushHandler(pushes)) }
                    made.parts.withLock { $0[ObjectIdentifier(channel)] = (queue, handshake) }
                }
            }
        var connected: (any Channel)?
        let channel: any Channel
        let queue: RedisRequestQueue
        let address = "\(configuration.host):\(configuration.port)"
        do {
            channel = try await bootstrap.connect(host: configuration.host, port: configuration.port).get()
            connected = channel
            guard let (found, handshake) = made.parts.withLock({ $0[ObjectIdentifier(channel)] }) else {
                throw RedisError.connectionFailed("the channel has no request queue")
            }
            queue = found
            do { try await handshake?.get() } catch let error as RedisError {
                throw error
            } catch {
                throw RedisError.tlsFailed(RedisTLS.words(for: error, host: tls?.name ?? configuration.host))
            }
        } catch {
            try? await connected?.close()  // connected, but not a connection anyone can close
            pushes?.finish()
            switch error {
            case RedisError.tlsFailed(let text): throw RedisError.tlsFailed("\(address): \(text)")
            case RedisError.connectionFailed(let text): throw RedisError.connectionFailed("\(address): \(text)")
            default: throw RedisError.connectionFailed("\(address): \(Self.words(for: error))")
            }
        }
        if let descriptor = ChannelSocket.duplicateDescriptor(of: channel) {
            // Marked close-on-exec either way; over TLS every byte must go
            // through NIOSSL, so the queue writes through NIO, not the socket.
            if tls == nil { queue.adopt(descriptor: descriptor) } else { Glibc.close(descriptor) }
        }
        let connection = RedisConnection(channel: channel, queue: queue, timeout: configuration.commandTimeout)
        do {
            try await connection.authenticate(configuration)
            if configuration.database != 0 {
                try connection.expectOK(try await connection.handshakeStep(["SELECT", "\(configuration.database)"]))
            } else if tls != nil && configuration.password == nil {
                // One round trip all the same: a TLS 1.3 server refuses a
                // client certificate (or its lack) after the handshake, and
                // that is the connect's failure, not the first request's.
                guard case .simpleString("PONG") = try await connection.handshakeStep(["PING"]) else {
                    throw RedisError.protocolError("no PONG")
                }
            }
        } catch let error as RedisError {
            await connection.close()
            switch error {
            case .authenticationFailed: throw error
            case .tlsFailed(let text): throw RedisError.tlsFailed("\(address): \(text)")
            // A TLS 1.3 server that refuses the client's certificate (or its
            // lack) sends its alert after the handshake; the close may come first.
            case .connectionClosed where tls != nil:
                throw RedisError.tlsFailed("\(address): the server closed the connection right after the TLS handshake "
                    + "(does it want a client certificate? certificateFile and privateKeyFile)")
            default: throw RedisError.connectionFailed("handshake: \(error)")
            }
        } catch {
            await connection.close()
            throw RedisError.connectionFailed("handshake: \(error)")
        }
        return connection
    }

    /// A command of the handshake; `NOAUTH` (the server wants a password
    /// and none was given) is ``RedisError/authenticationFailed(_:)``.
    private func handshakeStep(_ command: [String]) async throws -> RESPValue {
        let reply = try await send(command.map { Array($0.utf8) })
        if case .error(let message) = reply, message.hasPrefix("NOAUTH") {
            throw RedisError.authenticationFailed("the server wants a password (NOAUTH): give one in the URL (redis://user:password@host)")
        }
        return reply
    }

    /// `AUTH [user] password`, when the configuration has a password. A
    /// refusal is ``RedisError/authenticationFailed(_:)`` in words, with the
    /// user's name and Redis's error code, never the password.
    private func authenticate(_ configuration: RedisConfiguration) async throws {
        guard let password = configuration.password else {
            if let username = configuration.username {
                throw RedisError.authenticationFailed("user \"\(username)\" has no password (redis://user:password@host)")
            }
            return
        }
        let who = configuration.username.map { "user \"\($0)\"" } ?? "the default user"
        let reply = try await send((["AUTH"] + (configuration.username.map { [$0] } ?? []) + [password]).map { Array($0.utf8) })
        let message: String
        switch reply {
        case .simpleString("OK"): return
        case .error(let text): message = text
        case .blobError(let text): message = String(buffer: text)
        default: throw RedisError.protocolError("AUTH answered \(reply)")
        }
        let code = message.prefix { $0 != " " }
        let words: String
        switch code {
        case "WRONGPASS": words = "wrong user name or password, or the user is disabled"
        case "NOPERM": words = "the user may not run AUTH"
        case "ERR" where message.contains("without any password configured"):
            words = "the server has no password set for the default user (drop the password from the URL, or name the ACL user)"
        case "ERR" where message.contains("wrong number of arguments"):
            words = "the server does not know ACL users (Redis 6 or later is needed for a user name)"
        default: words = "refused"
        }
        // Redis's own text names no password; it is clipped all the same.
        throw RedisError.authenticationFailed("\(who) at \(configuration.host):\(configuration.port): \(words) (\(clipped(message, to: 200)))")
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

/// What the channel initializer made for each channel a connect tried: its
/// queue and, over TLS, its handshake's outcome.
private final class ChannelParts: Sendable {
    let parts = Mutex<[ObjectIdentifier: (RedisRequestQueue, EventLoopFuture<Void>?)]>([:])
}

extension Duration {
    /// Whole nanoseconds, saturating (from the full-width attoseconds:
    /// `components` traps beyond `Int64.max` seconds).
    var nanosecondsClamped: Int64 {
        let nanoseconds = attoseconds / 1_000_000_000
        return nanoseconds > Int128(Int64.max) ? .max : nanoseconds < Int128(Int64.min) ? .min : Int64(nanoseconds)
    }
}
