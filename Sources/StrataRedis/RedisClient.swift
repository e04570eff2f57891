import NIOCore
import NIOPosix
import Strata
import Synchronization

/// A small Redis client: a pool of pipelined connections, created on demand.
///
/// Each pool slot connects at most once at a time, and every caller that
/// needs the slot meanwhile shares that connect. After a failed connect the
/// slot's requests fail fast with ``RedisError/unavailable(_:)`` until a
/// backoff (50 ms, doubling per failed connect to 1 s) has passed, so a dead
/// Redis turns into quick misses rather than stuck requests.
public final class RedisClient: Sendable {
    typealias Connector = @Sendable (RedisConfiguration, any EventLoopGroup) async throws -> RedisConnection

    struct State {
        var slots: [RedisConnectionSlot]
        var next = 0
        var nextWaiterID: UInt64 = 0
        var closed = false
        /// Connect tasks not finished yet; ``shutdown()`` waits for them.
        var connectsInFlight = 0
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    /// Where the client connects, how many connections it pools, its timeouts.
    public let configuration: RedisConfiguration
    let group: any EventLoopGroup
    /// Runs tasks on the event loops of this client's connections (see ``EventLoopTaskExecutor``).
    public let taskExecutor: EventLoopTaskExecutor
    let connector: Connector
    private let state: Mutex<State>
    /// Fails requests fast while the server does not answer (``RedisCircuitBreaker``).
    let breaker = RedisCircuitBreaker()
    /// Whether requests fail fast now: the last ones got no answer (on a
    /// cluster: those to at least one master).
    public var isCircuitOpen: Bool { cluster?.isAnyCircuitOpen ?? breaker.isOpen }
    /// The cluster this client routes to, when it is a cluster client; `nil` for one server.
    let cluster: RedisClusterRouter?
    /// Whether this client talks to a Redis Cluster (see ``init(cluster:group:)``).
    public var isCluster: Bool { cluster != nil }
    /// The server's clock as this machine knows it (``RedisServerClock``);
    /// on a cluster, each master's client has its own.
    let serverClock = RedisServerClock()

    /// A client for `configuration`, its connections on `group`'s loops,
    /// opened when first needed.
    public convenience init(configuration: RedisConfiguration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.init(configuration: configuration, group: group) { try await RedisConnection.connect($0, group: $1) }
    }

    /// A client for `redis://…` or `rediss://…` (see ``RedisConfiguration``);
    /// a URL it cannot read throws.
    public convenience init(url: String) throws {
        self.init(configuration: try RedisConfiguration(url: url))
    }

    /// A client of a Redis Cluster, seeded with some of its nodes (any will
    /// do; the others are found from `CLUSTER SLOTS`). Each master gets a pool
    /// like the one a single server gets (the seeds' settings: user,
    /// password, TLS, timeouts, pool size); each command goes to the master
    /// serving its key's slot, and `MOVED`/`ASK` redirects are followed (see
    /// ``RedisError/tooManyRedirects(_:)``). Commands of one transaction or
    /// script must name keys of one slot (a hash tag: `{user:7}:name`).
    public init(cluster seeds: [RedisConfiguration], group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) throws {
        let router = try RedisClusterRouter(seeds: seeds, group: group)
        self.configuration = router.template
        self.group = group
        self.taskExecutor = EventLoopTaskExecutor(group: group)
        self.connector = { try await RedisConnection.connect($0, group: $1) }
        self.state = Mutex(State(slots: []))
        self.cluster = router
    }

    /// ``init(cluster:group:)`` from `redis://` or `rediss://` URLs of some of the cluster's nodes.
    public convenience init(cluster urls: [String], connections: Int = 2, commandTimeout: Duration = .seconds(2),
                            connectTimeout: Duration = .seconds(1)) throws {
        try self.init(cluster: urls.map {
            try RedisConfiguration(url: $0, connections: connections, commandTimeout: commandTimeout, connectTimeout: connectTimeout)
        })
    }

    /// `connector` opens one connection; tests substitute one that they can hold.
    init(configuration: RedisConfiguration, group: any EventLoopGroup, connector: @escaping Connector) {
        self.configuration = configuration
        self.group = group
        self.taskExecutor = EventLoopTaskExecutor(group: group)
        self.connector = connector
        self.state = Mutex(State(slots: Array(repeating: RedisConnectionSlot(), count: configuration.connections)))
        self.cluster = nil
    }

    /// A client dropped without ``shutdown()`` closes its pooled connections:
    /// NIO's event loop keeps a registered channel (and its socket) open for
    /// as long as nobody closes it, so without this every client (every
    /// `RedisCacheLevel`) created and dropped leaked its sockets.
    ///
    /// Nothing can be using the pool by now. Every request runs inside one of
    /// this client's methods, which holds it; a connect under way is a task
    /// that holds it, and resumes its waiters before letting go; so no caller
    /// waits for a slot and no connect is in flight (any waiter found is
    /// failed all the same, not leaked). A connection handed out by
    /// ``connection()`` is only used by its holder's method of this client
    /// or of its level, which also hold the client. After ``shutdown()`` the
    /// slots are idle: nothing is closed twice (and ``RedisConnection/closeSoon()``
    /// closes once anyway).
    deinit {
        let (connections, waiters) = closePool()
        for waiter in waiters { waiter.resume(throwing: RedisError.connectionClosed) }
        for connection in connections { connection.closeSoon() }
    }

    func connection() async throws -> RedisConnection {
        if cluster != nil { throw RedisError.protocolError("a cluster client has no single connection: commands go to their slot's master") }
        // Fast path: the next slot is connected. Otherwise the slow path
        // decides again, and acts, in one critical section.
        let (index, ready) = try state.withLock { state -> (Int, RedisConnection?) in
            if state.closed { throw RedisError.connectionClosed }
            let index = state.next % state.slots.count
            state.next &+= 1
            if case .connected(let connection) = state.slots[index].state, connection.isActive { return (index, connection) }
            return (index, nil)
        }
        if let ready { return ready }
        return try await acquire(slot: index)
    }

    private enum Step {
        case decided(RedisConnectionSlot.Decision)
        case cancelled
    }

    private func acquire(slot index: Int) async throws -> RedisConnection {
        let id = state.withLock { state in
            state.nextWaiterID &+= 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: RedisConnectionSlot.Waiter) in
                let step = state.withLock { state -> Step in
                    if state.closed { return .decided(.fail(.connectionClosed)) }
                    // Checked under the lock the cancellation handler takes: either it
                    // finds this waiter registered, or this sees the cancellation.
                    if Task.isCancelled { return .cancelled }
                    let decision = state.slots[index].acquire(id: id, waiter: waiter, now: .now)
                    if case .startConnect = decision { state.connectsInFlight += 1 }
                    return .decided(decision)
                }
                switch step {
                case .cancelled: waiter.resume(throwing: CancellationError())
                case .decided(.use(let connection)): waiter.resume(returning: connection)
                case .decided(.fail(let error)): waiter.resume(throwing: error)
                case .decided(.join): break
                case .decided(.startConnect): Task { await self.connect(slot: index) }
                }
            }
        } onCancel: {
            state.withLock { $0.slots[index].removeWaiter(id: id) }?.resume(throwing: CancellationError())
        }
    }

    /// Runs one connect for slot `index` (independent of any caller's
    /// cancellation) and hands its outcome to the slot's waiters. A connection
    /// that arrives after ``shutdown()`` is closed here.
    private func connect(slot index: Int) async {
        let result: Result<RedisConnection, any Error>
        do { result = .success(try await connector(configuration, group)) } catch { result = .failure(error) }
        let (waiters, late) = state.withLock { state -> ([RedisConnectionSlot.Waiter], RedisConnection?) in
            switch result {
            case .success(let connection) where state.closed: ([], connection)  // its waiters already failed
            case .success(let connection): (state.slots[index].connected(connection), nil)
            case .failure where state.closed: ([], nil)
            case .failure(let error): (state.slots[index].failed("\(error)", now: .now), nil)
            }
        }
        // A new connection may reach another machine (a failover behind one address).
        if case .success = result, late == nil { serverClock.forget() }
        for waiter in waiters { waiter.resume(with: result) }
        if let late { await late.close() }
        let drained = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.connectsInFlight -= 1
            guard state.connectsInFlight == 0 else { return [] }
            defer { state.drained = [] }
            return state.drained
        }
        for continuation in drained { continuation.resume() }
    }

    /// Sends a command; a server error reply throws ``RedisError/server(_:)``.
    public func send(_ arguments: [[UInt8]]) async throws -> RESPValue {
        if let cluster { return try Self.checked(await cluster.send(arguments, slot: RedisClusterRouter.slot(ofCommand: arguments))) }
        return try Self.checked(await breaker.guarded { try await connection().send(arguments) })
    }

    /// ``send(_:)`` without the circuit breaker: for the steps of a write
    /// (a clear's `SCAN`), which must be tried, not refused.
    func sendPastBreaker(_ arguments: [[UInt8]]) async throws -> RESPValue {
        if let cluster {
            return try Self.checked(await cluster.send(arguments, slot: RedisClusterRouter.slot(ofCommand: arguments), guarded: false))
        }
        let sentAt = ContinuousClock.now
        let reply = try await connection().send(arguments)
        breaker.answered(sentAt: sentAt)
        return try Self.checked(reply)
    }

    /// `commands` on one connection of this (single-server) client, through
    /// the circuit breaker or not (a cluster's nodes).
    func send(batch commands: [[[UInt8]]], guarded: Bool, cancellable: Bool) async throws -> [RESPValue] {
        guard guarded else {
            let sentAt = ContinuousClock.now
            let replies = try await connection().send(batch: commands, cancellable: cancellable)
            breaker.answered(sentAt: sentAt)
            return replies
        }
        return try await breaker.guarded { try await connection().send(batch: commands, cancellable: cancellable) }
    }

    /// `deadline` (on `clock`, this machine's wall clock) on this server's
    /// clock, in microseconds since 1970, never later than the true one (see
    /// ``RedisServerClock``): asks the server for `TIME` first when nothing
    /// is known of its clock, and in the background when what is known is
    /// old. `nil` when the server refuses `TIME`; a failure to reach it throws.
    func serverMicroseconds(of deadline: CacheInstant, clock: any CacheClock) async throws -> Int64? {
        let now = ContinuousClock.now
        if serverClock.needsSample(now: now) {
            try await measureClock()
        } else if serverClock.claimRefresh(now: now) {
            Task {
                defer { serverClock.refreshEnded() }
                try? await measureClock()
            }
        }
        return serverClock.serverMicroseconds(of: deadline, clock: clock)
    }

    /// Asks this (single-server) client's server for `TIME` and learns the
    /// reply; a refusal (`TIME` not allowed) is noted, not thrown.
    func measureClock() async throws {
        let reply: RESPValue
        do { reply = try await sendPastBreaker([RedisCommandName.time]) } catch RedisError.server {
            serverClock.refused()
            return
        }
        let receivedAt = ContinuousClock.now
        guard let server = RedisServerClock.microseconds(fromTime: reply) else {
            throw RedisError.protocolError("unexpected TIME reply \(reply)")
        }
        serverClock.learn(server: server, receivedAt: receivedAt)
    }

    /// `reply`, unless it is a server error: that throws ``RedisError/server(_:)``.
    static func checked(_ reply: RESPValue) throws -> RESPValue {
        switch reply {
        case .error(let message): throw RedisError.server(message)
        case .blobError(let message): throw RedisError.server(String(buffer: message))
        default: return reply
        }
    }

    /// Sends `commands` on one connection in one write (one round trip) and
    /// returns their replies in order. Server error replies are returned as
    /// ``RESPValue/error(_:)``, not thrown: each command succeeds or fails alone.
    ///
    /// On a cluster, the commands are sent to the masters of their keys'
    /// slots (one write per slot), and the replies put back in order.
    public func send(batch commands: [[[UInt8]]]) async throws -> [RESPValue] {
        if let cluster { return try await cluster.send(routedBatch: commands) }
        return try await breaker.guarded { try await connection().send(batch: commands) }
    }

    /// Runs `commands` as one transaction (`MULTI` … `EXEC`, in one write):
    /// no other client's command runs between them. Returns their replies in
    /// order; a command's error reply is returned as ``RESPValue/error(_:)``.
    /// On a cluster, every command must name keys of one slot (a hash tag).
    public func send(transaction commands: [[[UInt8]]]) async throws -> [RESPValue] {
        if let cluster {
            guard let slot = commands.lazy.compactMap(RedisClusterRouter.slot(ofCommand:)).first else {
                throw RedisError.protocolError("a cluster transaction needs a command with a key")
            }
            return try await cluster.send(transaction: commands, slot: slot)
        }
        return try await send(transaction: commands, prefix: [])
    }

    /// ``send(transaction:)`` on this client's own pool, with `prefix`
    /// (`ASKING` on a cluster node) sent first on the same connection.
    func send(transaction commands: [[[UInt8]]], prefix: [[[UInt8]]]) async throws -> [RESPValue] {
        try await send(transaction: commands, prefix: prefix, suffix: []).results
    }

    /// ``send(transaction:prefix:)`` with `suffix` sent after `EXEC` on the same
    /// connection, in the same write; returns the prefix's replies too.
    func send(transaction commands: [[[UInt8]]], prefix: [[[UInt8]]], suffix: [[[UInt8]]]) async throws
        -> (prefix: [RESPValue], results: [RESPValue]) {
        let (connection, all) = try await breaker.guarded { () async throws -> (RedisConnection, [RESPValue]) in
            let connection = try await self.connection()
            let wrapped = [[RedisCommandName.multi]] + commands + [[RedisCommandName.exec]]
            return (connection, try await connection.send(batch: prefix.isEmpty && suffix.isEmpty ? wrapped : prefix + wrapped + suffix))
        }
        let replies = all.dropFirst(prefix.count).dropLast(suffix.count)
        for reply in replies.dropLast() {
            switch reply {
            case .error(let message): throw RedisError.server(message)  // the transaction was refused (EXECABORT follows)
            case .blobError(let message): throw RedisError.server(String(buffer: message))
            default: continue
            }
        }
        switch replies.last {
        case .array(let results?) where results.count == commands.count: return (Array(all.prefix(prefix.count)), results)
        case .error(let message): throw RedisError.server(message)
        case let other:
            // Not the transaction's answer: the replies and requests may be
            // out of step, so the connection is not used again.
            connection.closeSoon()
            throw RedisError.protocolError("EXEC answered \(other.map { "\($0)" } ?? "nothing")")
        }
    }

    /// Sends a command given as text, each argument as UTF-8 (`send("GET", "k")`);
    /// a server error reply throws ``RedisError/server(_:)``.
    public func send(_ arguments: String...) async throws -> RESPValue {
        try await send(arguments.map { Array($0.utf8) })
    }

    /// Closes every connection, fails requests waiting for a connect with
    /// ``RedisError/connectionClosed``, and returns once connects still under
    /// way have finished (their connections closed). Later requests fail.
    public func shutdown() async {
        await cluster?.shutdown()
        let (connections, waiters) = closePool()
        for waiter in waiters { waiter.resume(throwing: RedisError.connectionClosed) }
        for connection in connections { await connection.close() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if state.connectsInFlight == 0 { return true }
                state.drained.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Marks the client closed and empties its slots; returns their
    /// connections, to close, and the callers waiting for a connect, to fail.
    private func closePool() -> ([RedisConnection], [RedisConnectionSlot.Waiter]) {
        state.withLock { state in
            state.closed = true
            var connections: [RedisConnection] = [], waiters: [RedisConnectionSlot.Waiter] = []
            for index in state.slots.indices {
                let (connection, slotWaiters) = state.slots[index].shutDown()
                if let connection { connections.append(connection) }
                waiters += slotWaiters
            }
            return (connections, waiters)
        }
    }

    // Test probes.
    func backoff(slot: Int) -> Duration { state.withLock { $0.slots[slot].backoff } }
    func connectWaiters(slot: Int) -> Int { state.withLock { $0.slots[slot].waiterCount } }
    var isShutDown: Bool { state.withLock { $0.closed } }
}
