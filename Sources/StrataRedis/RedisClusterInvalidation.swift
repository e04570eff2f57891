import NIOCore
import Strata
import Synchronization

/// A level's invalidations on a Redis Cluster: one
/// ``RedisInvalidationSubscriber`` (a RESP3 connection with `CLIENT TRACKING
/// ON BCAST PREFIX <prefix> NOLOOP`) per master, since each master reports
/// only changes to the keys it holds. Masters are taken from the slot map,
/// and again whenever it changes (a master that appears gets a subscriber,
/// one that left the map loses its own).
///
/// A subscriber added after the level was used starts with `.all`, like a
/// single server's after activity before its first subscription: what
/// that master's keys went through meanwhile is unknown.
final class RedisClusterInvalidation: Sendable {
    typealias Handler = RedisInvalidationSubscriber.Handler

    let router: RedisClusterRouter
    let prefix: [UInt8]
    let group: any EventLoopGroup
    private let handler: Handler

    private struct State {
        var subscribers: [String: RedisInvalidationSubscriber] = [:]
        var setup: Task<Void, Never>?
        var stopped = false
        var lastError: String?
        /// Operations waiting for the first list of masters (at most ``RedisInvalidationSubscriber/firstAttemptWait``).
        var settleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    /// The first list of masters arrived (or the wait for it is over): one
    /// atomic load per operation once it has; set only by ``settle()``.
    private let settled = Atomic<Bool>(false)
    /// The level was read or written: later subscribers start with `.all`.
    private let used = Atomic<Bool>(false)

    init(router: RedisClusterRouter, group: any EventLoopGroup, prefix: [UInt8], handler: @escaping Handler) {
        self.router = router
        self.group = group
        self.prefix = prefix
        self.handler = handler
        router.observeMasters { [weak self] masters in self?.sync(masters) }
    }

    /// Starts subscribing on every master (once).
    func start() {
        state.withLock { state in
            guard state.setup == nil, !state.stopped else { return }
            // Detached, like a subscriber's own loop: it carries no task-locals of the caller.
            state.setup = Task.detached { [weak self] in
                var backoff = RedisInvalidationSubscriber.initialBackoff
                while let self, !Task.isCancelled {
                    do {
                        self.sync(try await self.router.masters())
                        break
                    } catch {
                        self.state.withLock { $0.lastError = "\(error)" }
                        self.settle()
                    }
                    do { try await Task.sleep(for: backoff) } catch { break }
                    backoff = min(backoff * 2, RedisInvalidationSubscriber.maximumBackoff)
                }
                self?.settle()
            }
        }
        group.next().scheduleTask(in: RedisInvalidationSubscriber.firstAttemptWait) { self.settle() }
    }

    /// Ends the wait for the first list of masters; resumes the operations waiting.
    private func settle() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            settled.store(true, ordering: .releasing)
            defer { state.settleWaiters = [] }
            return state.settleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Subscribers for `masters`, and for no other node.
    private func sync(_ masters: [String]) {
        let (added, removed) = state.withLock { state -> ([RedisInvalidationSubscriber], [RedisInvalidationSubscriber]) in
            guard state.setup != nil, !state.stopped else { return ([], []) }
            var added: [RedisInvalidationSubscriber] = []
            for address in masters where state.subscribers[address] == nil {
                guard let node = try? router.node(address) else { continue }
                let subscriber = RedisInvalidationSubscriber(configuration: node.configuration, group: group, prefix: prefix, handler: handler)
                state.subscribers[address] = subscriber
                added.append(subscriber)
            }
            let gone = state.subscribers.keys.filter { !masters.contains($0) }
            return (added, gone.compactMap { state.subscribers.removeValue(forKey: $0) })
        }
        for subscriber in added {
            if used.load(ordering: .sequentiallyConsistent) { subscriber.noteActivity() }
            subscriber.start()
        }
        for subscriber in removed { subscriber.stopSoon() }
        if !masters.isEmpty { settle() }
    }

    /// The subscribed tracking connection to the master at `address`, for
    /// the level's writes to it (see ``RedisInvalidationSubscriber/writeConnection``).
    func writeConnection(for address: String) -> RedisConnection? {
        state.withLock { $0.subscribers[address] }?.writeConnection
    }

    private var subscribers: [RedisInvalidationSubscriber] { state.withLock { Array($0.subscribers.values) } }

    /// Before every read and write of the level: waits for the first
    /// attempts to subscribe (each at most ``RedisInvalidationSubscriber/firstAttemptWait``)
    /// and notes the activity on every master's subscriber.
    func beginOperation() async {
        used.store(true, ordering: .sequentiallyConsistent)
        if !settled.load(ordering: .acquiring) {
            // Until the masters are known (or the start-up wait is over: the
            // cluster may be down); not at all before ``start()``.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.setup == nil || settled.load(ordering: .acquiring) { return true }
                    state.settleWaiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
        for subscriber in subscribers {
            await subscriber.awaitFirstAttempt()
            subscriber.noteActivity()
        }
    }

    /// Whether every master's subscriber is subscribed now.
    var isReady: Bool {
        let all = subscribers
        return !all.isEmpty && all.allSatisfy(\.isReady)
    }

    /// Subscriptions made so far, over all masters.
    var subscriptions: Int { subscribers.reduce(0) { $0 + $1.subscriptions } }

    /// Why a master's subscriber (or reading the masters) last failed.
    var lastError: String? {
        let (error, all) = state.withLock { ($0.lastError, Array($0.subscribers)) }
        return all.compactMap { address, subscriber in subscriber.lastError.map { "\(address): \($0)" } }.first ?? error
    }

    /// Stops every subscriber and waits for them.
    func stop() async {
        let (setup, all) = state.withLock { state in
            state.stopped = true
            return (state.setup, Array(state.subscribers.values))
        }
        setup?.cancel()
        for subscriber in all { await subscriber.stop() }
    }

    /// ``stop()`` without waiting (from a deinit).
    func stopSoon() {
        let (setup, all) = state.withLock { state in
            state.stopped = true
            return (state.setup, Array(state.subscribers.values))
        }
        setup?.cancel()
        for subscriber in all { subscriber.stopSoon() }
    }
}
