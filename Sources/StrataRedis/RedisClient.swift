import NIOCore
import NIOPosix
import Synchronization

/// A small Redis client: a pool of pipelined connections, created on demand.
/// After a failed connect, requests fail fast with ``RedisError/unavailable(_:)``
/// until a backoff (50 ms doubling to 1 s) has passed, so a dead Redis turns
/// into quick misses rather than stuck requests.
public final class RedisClient: Sendable {
    struct Slot {
        var connection: RedisConnection?
        var connecting: Task<RedisConnection, any Error>?
    }

    struct State {
        var slots: [Slot]
        var next = 0
        var retryAt: ContinuousClock.Instant?
        var backoff: Duration = .milliseconds(50)
        var lastError = ""
        var closed = false
    }

    public let configuration: RedisConfiguration
    let group: any EventLoopGroup
    private let state: Mutex<State>

    public init(configuration: RedisConfiguration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.group = group
        self.state = Mutex(State(slots: Array(repeating: Slot(), count: configuration.connections)))
    }

    public convenience init(url: String) throws {
        self.init(configuration: try RedisConfiguration(url: url))
    }

    enum Pick {
        case ready(RedisConnection)
        case wait(Task<RedisConnection, any Error>)
        case connect
    }

    /// Chooses a slot and what to do with it. Synchronous on purpose: the lock
    /// is never held across an `await`, and no task is created under it.
    private func pick() throws -> (Pick, Int) {
        try state.withLock { state in
            if state.closed { throw RedisError.connectionClosed }
            let index = state.next % state.slots.count
            state.next &+= 1
            if let connection = state.slots[index].connection, connection.isActive { return (.ready(connection), index) }
            state.slots[index].connection = nil
            if let pending = state.slots[index].connecting { return (.wait(pending), index) }
            if let retryAt = state.retryAt, ContinuousClock.now < retryAt {
                throw RedisError.unavailable("reconnecting after: \(state.lastError)")
            }
            return (.connect, index)
        }
    }

    /// Installs `task` as slot `index`'s connect, unless another caller got
    /// there first; returns the task to wait for.
    private func install(_ task: Task<RedisConnection, any Error>, at index: Int) -> Task<RedisConnection, any Error> {
        state.withLock { state in
            if let existing = state.slots[index].connecting { return existing }
            state.slots[index].connecting = task
            return task
        }
    }

    private func finished(_ task: Task<RedisConnection, any Error>, at index: Int, with result: Result<RedisConnection, any Error>) {
        state.withLock { state in
            if state.slots[index].connecting == task { state.slots[index].connecting = nil }
            switch result {
            case .success(let connection):
                if state.slots[index].connection == nil { state.slots[index].connection = connection }
                state.retryAt = nil
                state.backoff = .milliseconds(50)
            case .failure(let error):
                state.lastError = "\(error)"
                state.retryAt = ContinuousClock.now + state.backoff
                state.backoff = min(state.backoff * 2, .seconds(1))
            }
        }
    }

    func connection() async throws -> RedisConnection {
        let (choice, index) = try pick()
        let task: Task<RedisConnection, any Error>
        switch choice {
        case .ready(let connection):
            return connection
        case .wait(let pending):
            task = pending
        case .connect:
            let configuration = self.configuration, group = self.group
            let mine = Task { try await RedisConnection.connect(configuration, group: group) }
            task = install(mine, at: index)
            if task != mine { mine.cancel() }
        }
        do {
            let connection = try await task.value
            finished(task, at: index, with: .success(connection))
            return connection
        } catch {
            finished(task, at: index, with: .failure(error))
            throw error
        }
    }

    /// Sends a command; a server error reply throws ``RedisError/server(_:)``.
    public func send(_ arguments: [[UInt8]]) async throws -> RESPValue {
        let reply = try await connection().send(arguments)
        if case .error(let message) = reply { throw RedisError.server(message) }
        return reply
    }

    public func send(_ arguments: String...) async throws -> RESPValue {
        try await send(arguments.map { Array($0.utf8) })
    }

    /// Closes every connection; later requests fail.
    public func shutdown() async {
        let (connections, tasks) = state.withLock { state -> ([RedisConnection], [Task<RedisConnection, any Error>]) in
            state.closed = true
            defer { state.slots = state.slots.map { _ in Slot() } }
            return (state.slots.compactMap(\.connection), state.slots.compactMap(\.connecting))
        }
        for task in tasks { task.cancel() }
        for connection in connections { await connection.close() }
    }
}
