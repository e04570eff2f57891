import NIOCore
import Strata
import Synchronization

/// One dedicated RESP3 connection on which Redis reports every change to a
/// key under a prefix, by any other client: `HELLO 3`, then
/// `CLIENT TRACKING ON BCAST PREFIX <prefix> NOLOOP`. Each `invalidate` push
/// is handed on as the Redis key names it carries (`.key`), or `.all` when
/// its payload is null (`FLUSHDB`, `FLUSHALL`).
///
/// - Own writes: while subscribed, the level sends its writes on this
///   connection (``writeConnection``), and `NOLOOP` keeps Redis from
///   reporting them back (scripts aside: ``RedisScriptEchoes``).
///
/// - Connection loss: the connection is health-checked with a `PING` per
///   interval (a reply missing past the command timeout closes it). When it
///   closes, `.contactLost` is handed on (changes may be missed), then it
///   reconnects with a backoff (50 ms doubling to 2 s) and subscribes again,
///   starting with `.all` (what changed meanwhile is unknown).
/// - Activity before the first subscription (reads and writes of the level,
///   ``noteActivity()``) makes it start with `.all` too.
/// - Start-up: once started, the level's operations wait for the first
///   attempt to subscribe (``awaitFirstAttempt()``), at most
///   ``firstAttemptWait``: a read racing the subscription would otherwise
///   cost a flush of the levels above and drop its own back-fills.
final class RedisInvalidationSubscriber: Sendable {
    typealias Handler = @Sendable (CacheInvalidation<[UInt8]>) async -> Void

    static let initialBackoff = Duration.milliseconds(50)
    static let maximumBackoff = Duration.seconds(2)
    /// Pushes waiting for the listeners at most; beyond, the connection is
    /// closed (and the levels above flushed) rather than a push lost.
    static let maximumBacklog = 100_000
    /// The connection's name in `CLIENT LIST`.
    static let clientName = "strata-invalidation"

    let configuration: RedisConfiguration
    let group: any EventLoopGroup
    let prefix: [UInt8]
    let healthCheckInterval: Duration
    private let handler: Handler

    private struct State {
        var task: Task<Void, Never>?
        var connection: RedisConnection?
        /// `connection` once subscribed, until its loss is noticed.
        var writer: RedisConnection?
        var stopped = false
        var lastError: String?
        /// Operations waiting for the first attempt to subscribe.
        var firstAttemptWaiters: [CheckedContinuation<Void, Never>] = []
        var firstAttemptSettled = true
    }

    /// The longest an operation waits for the first subscription.
    static var firstAttemptWait: TimeAmount { .milliseconds(250) }

    private let state = Mutex(State())
    /// From a confirmed subscription until its loss is noticed.
    private let coherent = Atomic<Bool>(false)
    /// A read or write happened while not ``coherent``.
    private let dirty = Atomic<Bool>(false)
    /// Subscribed, and the flush that may follow done.
    private let ready = Atomic<Bool>(false)
    private let subscriptionCount = Atomic<Int>(0)
    /// No operation needs to wait: not started, or the first attempt to
    /// subscribe is over (subscribed, failed, or ``firstAttemptWait`` passed).
    private let settled = Atomic<Bool>(true)

    init(configuration: RedisConfiguration, group: any EventLoopGroup, prefix: [UInt8],
         healthCheckInterval: Duration = .seconds(1), handler: @escaping Handler) {
        self.configuration = configuration
        self.group = group
        self.prefix = prefix
        self.healthCheckInterval = healthCheckInterval
        self.handler = handler
    }

    /// Whether invalidations are being received now.
    var isReady: Bool { ready.load(ordering: .acquiring) }

    /// The subscribed connection, for the level's writes (Redis does not
    /// report a write made on it back to it); `nil` while not subscribed.
    var writeConnection: RedisConnection? {
        guard isReady else { return nil }
        return state.withLock { $0.writer }.flatMap { $0.isActive ? $0 : nil }
    }
    /// Subscriptions made so far (1 + reconnections).
    var subscriptions: Int { subscriptionCount.load(ordering: .relaxed) }
    /// Why the last connection or subscription failed, if one did.
    var lastError: String? { state.withLock { $0.lastError } }

    /// Called before every read and write of the level. The two sequentially
    /// consistent operations pair with those of ``run()``: either this sees
    /// the subscription (and Redis reports what follows), or the subscriber
    /// sees the flag and flushes.
    func noteActivity() {
        if !coherent.load(ordering: .sequentiallyConsistent) { dirty.store(true, ordering: .sequentiallyConsistent) }
    }

    /// Starts subscribing (once; later calls do nothing).
    func start() {
        let started = state.withLock { state -> Bool in
            guard state.task == nil, !state.stopped else { return false }
            state.firstAttemptSettled = false
            settled.store(false, ordering: .releasing)
            // Detached: it outlives the call that started it and must carry
            // none of its task-locals (a request's trace, a write's origin).
            state.task = Task.detached { await self.run() }
            return true
        }
        if started {
            group.next().scheduleTask(in: Self.firstAttemptWait) { self.settleFirstAttempt() }
        }
    }

    /// Waits, if the first attempt to subscribe is under way, until it is
    /// over (at most ``firstAttemptWait``). One atomic load otherwise.
    func awaitFirstAttempt() async {
        if settled.load(ordering: .acquiring) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.firstAttemptSettled { return true }
                state.firstAttemptWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Ends the start-up wait (first call only); resumes the waiters.
    private func settleFirstAttempt() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            if state.firstAttemptSettled { return [] }
            state.firstAttemptSettled = true
            settled.store(true, ordering: .releasing)
            defer { state.firstAttemptWaiters = [] }
            return state.firstAttemptWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops for good: closes the connection and waits for the loop to end.
    func stop() async {
        let (task, connection) = state.withLock { state in
            state.stopped = true
            return (state.task, state.connection)
        }
        task?.cancel()
        await connection?.close()
        await task?.value
    }

    /// ``stop()`` without waiting (from a deinit).
    func stopSoon() {
        let (task, connection) = state.withLock { state in
            state.stopped = true
            return (state.task, state.connection)
        }
        task?.cancel()
        connection?.closeSoon()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func run() async {
        var backoff = Self.initialBackoff
        while !Task.isCancelled, !isStopped {
            let (pushes, continuation) = AsyncStream<RESPValue>.makeStream(bufferingPolicy: .bufferingOldest(Self.maximumBacklog))
            var connection: RedisConnection?
            do {
                let opened = try await RedisConnection.connect(configuration, group: group, pushes: continuation)
                connection = opened
                guard install(opened) else {
                    await opened.close()
                    break
                }
                try await subscribe(opened)
                backoff = Self.initialBackoff
                coherent.store(true, ordering: .sequentiallyConsistent)
                // Back after a loss: whatever changed meanwhile is unknown
                // (levels above dropped what they held at the loss; a
                // fail-safe kept its last known values until now).
                let reconnected = subscriptionCount.load(ordering: .relaxed) > 0
                if dirty.exchange(false, ordering: .sequentiallyConsistent) || reconnected { await handler(.all) }
                subscriptionCount.add(1, ordering: .relaxed)
                state.withLock { $0.writer = opened }
                ready.store(true, ordering: .releasing)
                settleFirstAttempt()
                await pump(opened, pushes)
                state.withLock { $0.lastError = "invalidation connection closed" }
            } catch {
                state.withLock { $0.lastError = "\(error)" }
            }
            settleFirstAttempt()  // a first attempt that failed: nobody waits for the retries
            ready.store(false, ordering: .releasing)
            state.withLock { $0.writer = nil }
            let wasCoherent = coherent.exchange(false, ordering: .sequentiallyConsistent)
            await connection?.close()
            if isStopped || Task.isCancelled { break }
            if wasCoherent { await handler(.contactLost) }
            do { try await Task.sleep(for: backoff) } catch { break }
            backoff = min(backoff * 2, Self.maximumBackoff)
        }
        ready.store(false, ordering: .releasing)
        state.withLock { $0.writer = nil }
        coherent.store(false, ordering: .sequentiallyConsistent)
        settleFirstAttempt()
    }

    /// Keeps `connection` for ``stop()``; `false` if stopped meanwhile.
    private func install(_ connection: RedisConnection) -> Bool {
        state.withLock { state in
            if state.stopped { return false }
            state.connection = connection
            return true
        }
    }

    private func subscribe(_ connection: RedisConnection) async throws {
        let commands: [[String]] = [
            ["HELLO", "3"],
            ["CLIENT", "SETNAME", Self.clientName],
        ]
        let replies = try await connection.send(batch: commands.map { $0.map { Array($0.utf8) } }
            + [["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX"].map { Array($0.utf8) } + [prefix, Array("NOLOOP".utf8)]])
        for reply in replies {
            switch reply {
            case .error(let message): throw RedisError.server(message)
            case .blobError(let message): throw RedisError.server(String(buffer: message))
            default: continue
            }
        }
        guard case .map = replies[0] else { throw RedisError.protocolError("HELLO 3 answered \(replies[0]) (RESP3 needs Redis 6)") }
    }

    /// Hands on the invalidations of `pushes` until the connection closes,
    /// pinging it meanwhile.
    private func pump(_ connection: RedisConnection, _ pushes: AsyncStream<RESPValue>) async {
        await withTaskGroup(of: Void.self) { group in
            let interval = healthCheckInterval
            group.addTask {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: interval) } catch { return }
                    do {
                        guard case .simpleString("PONG") = try await connection.send([RedisCommandName.ping]) else {
                            throw RedisError.protocolError("no PONG")
                        }
                    } catch {
                        await connection.close()  // ends `pushes`
                        return
                    }
                }
            }
            for await push in pushes {
                for invalidation in Self.invalidations(in: push) { await handler(invalidation) }
            }
            group.cancelAll()
        }
    }

    /// The invalidations an `invalidate` push carries: one `.key` per key
    /// name, or `.all` for a null payload. Other pushes carry none.
    static func invalidations(in push: RESPValue) -> [CacheInvalidation<[UInt8]>] {
        guard case .push(let items) = push, items.count == 2 else { return [] }
        switch items[0] {
        case .bulkString(let kind?) where kind.readableBytesView.elementsEqual("invalidate".utf8): break
        case .simpleString("invalidate"): break
        default: return []
        }
        switch items[1] {
        case .array(let keys?), .set(let keys): return keys.compactMap { $0.bytes.map { .key($0) } }
        case .null, .array(nil), .bulkString(nil): return [.all]
        default: return []
        }
    }
}
