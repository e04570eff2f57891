import NIOCore
import Synchronization

/// Sends commands to the Redis Cluster master serving their key's slot: one
/// ``RedisClient`` (pool, circuit breaker) per master, the slot map from
/// `CLUSTER SLOTS`, read on first use and again after a `MOVED`.
///
/// - `MOVED`: the slot is pointed at the node named, the command is sent
///   there, and the whole map is read again in the background.
/// - `ASK`: the command is sent once to the node named, after `ASKING` on the
///   same connection; the map stays as it is (the migration is not over).
/// - `TRYAGAIN` (a multi-key command on a slot half migrated): sent again
///   after 10, 20, 40 … ms.
/// - Past ``maxRedirects`` redirects for one command it fails with
///   ``RedisError/tooManyRedirects(_:)``.
/// - Errors of a node name it: `cannot connect to Redis: 127.0.0.1:7002: …`,
///   `Redis unavailable: 127.0.0.1:7002: …`.
final class RedisClusterRouter: Sendable {
    /// Redirects (and `TRYAGAIN`s) one command may follow.
    static var maxRedirects: Int { 5 }

    /// The seeds' configuration: user, password, TLS, timeouts, pool size.
    let template: RedisConfiguration
    /// Where the first map is read from (`host:port`).
    let seeds: [String]
    let group: any EventLoopGroup

    private struct State {
        var topology: RedisClusterTopology?
        var nodes: [String: RedisClient] = [:]
        var refresh: Task<RedisClusterTopology, any Error>?
        /// Bumped whenever the map changes (a refresh that differs, a `MOVED`).
        var epoch = 0
        var closed = false
        var observers: [@Sendable ([String]) -> Void] = []
        /// The masters the observers were last told of.
        var toldMasters: Set<String> = []

        /// Installs `topology`; the observers to tell of its masters (outside
        /// the lock) when they differ from those last told, however the map
        /// changed (a refresh, or a `MOVED` to a master never seen before).
        mutating func install(_ topology: RedisClusterTopology) -> [@Sendable ([String]) -> Void] {
            if self.topology != topology {
                self.topology = topology
                epoch += 1
            }
            let masters = Set(topology.masters)
            guard masters != toldMasters else { return [] }
            toldMasters = masters
            return observers
        }
    }

    private let state = Mutex(State())
    private let movedCount = Atomic<Int>(0)
    private let askCount = Atomic<Int>(0)

    /// `MOVED` redirects followed so far.
    var movedFollowed: Int { movedCount.load(ordering: .relaxed) }
    /// `ASK` redirects followed so far.
    var askFollowed: Int { askCount.load(ordering: .relaxed) }

    init(seeds: [RedisConfiguration], group: any EventLoopGroup) throws {
        guard let first = seeds.first else { throw RedisError.invalidURL("a cluster needs at least one seed URL") }
        template = first
        self.seeds = seeds.map { "\($0.host):\($0.port)" }
        self.group = group
    }

    /// A counter that moves whenever the slot map changes.
    var epoch: Int { state.withLock { $0.epoch } }

    /// Whether some node's circuit breaker fails its requests fast now.
    var isAnyCircuitOpen: Bool { state.withLock { Array($0.nodes.values) }.contains { $0.isCircuitOpen } }

    /// The masters known now (`host:port`); reads the map first if there is none.
    func masters() async throws -> [String] {
        if let topology = state.withLock({ $0.topology }) { return topology.masters }
        return try await refreshTopology().masters
    }

    /// Calls `observer` with the masters each time they change (a map read
    /// anew, or a `MOVED` to a master not known before).
    func observeMasters(_ observer: @escaping @Sendable ([String]) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// The client of the node at `address` (made on first use).
    func node(_ address: String) throws -> RedisClient {
        try state.withLock { state in
            if state.closed { throw RedisError.connectionClosed }
            if let client = state.nodes[address] { return client }
            var configuration = template
            guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]),
                  (1...65_535).contains(port) else {
                throw RedisError.protocolError("a cluster node's address is not host:port: \(address)")
            }
            configuration.host = String(address[..<colon])
            configuration.port = port
            let client = RedisClient(configuration: configuration, group: group)
            state.nodes[address] = client
            return client
        }
    }

    /// The master serving `slot`, from the map (read first if there is none).
    func address(ofSlot slot: Int) async throws -> String {
        let topology: RedisClusterTopology
        if let known = state.withLock({ $0.topology }) { topology = known } else { topology = try await refreshTopology() }
        guard let address = topology.master(ofSlot: slot) else {
            throw RedisError.unavailable("no master serves slot \(slot) (CLUSTER SLOTS lists none)")
        }
        return address
    }

    /// Any master, for commands without a key (`PING`).
    func anyMaster() async throws -> String {
        guard let first = try await masters().first else { throw RedisError.unavailable("the cluster lists no master") }
        return first
    }

    /// Reads the map again (`CLUSTER SLOTS`), from the masters known, then the
    /// seeds, the first that answers; one read at a time, shared by its callers.
    @discardableResult
    func refreshTopology() async throws -> RedisClusterTopology {
        let task = state.withLock { state -> Task<RedisClusterTopology, any Error> in
            if let running = state.refresh { return running }
            let candidates = (state.topology?.masters ?? []) + seeds.filter { !(state.topology?.masters.contains($0) ?? false) }
            let task = Task { try await self.readTopology(from: candidates) }
            state.refresh = task
            return task
        }
        do {
            let topology = try await task.value
            let observers = state.withLock { state -> [@Sendable ([String]) -> Void] in
                if state.refresh == task { state.refresh = nil }
                return state.install(topology)
            }
            for observer in observers { observer(topology.masters) }
            return topology
        } catch {
            state.withLock { if $0.refresh == task { $0.refresh = nil } }
            throw error
        }
    }

    /// ``refreshTopology()`` in the background (after a `MOVED`).
    func refreshSoon() {
        Task { _ = try? await self.refreshTopology() }
    }

    private func readTopology(from candidates: [String]) async throws -> RedisClusterTopology {
        var failures: [String] = []
        for address in candidates {
            do {
                let reply = try await node(address).sendPastBreaker([Array("CLUSTER".utf8), Array("SLOTS".utf8)])
                return try RedisClusterTopology(slotsReply: reply, askedHost: String(address[..<address.lastIndex(of: ":")!]))
            } catch {
                failures.append("\(address): \(error)")
            }
        }
        throw RedisError.unavailable("cannot read the cluster's slots from any node (\(failures.joined(separator: "; ")))")
    }

    /// Points `slot` at `address` at once (a `MOVED`), then reads the whole map again in the background.
    private func moved(slot: Int, to address: String) {
        let (observers, masters) = state.withLock { state -> ([@Sendable ([String]) -> Void], [String]) in
            guard var topology = state.topology, topology.master(ofSlot: slot) != address else { return ([], []) }
            topology.move(slot: slot, to: address)
            return (state.install(topology), topology.masters)
        }
        for observer in observers { observer(masters) }
        refreshSoon()
    }

    /// Sends `commands`, all on keys of `slot` (or, with `slot` nil, keyless),
    /// pipelined to the master serving it; each command that is redirected
    /// is sent again where it is told to (see the type's notes). Replies in
    /// order; server errors come back as ``RESPValue/error(_:)``.
    /// - Parameters:
    ///   - guarded: through the node's circuit breaker (reads), or not (writes).
    ///   - cancellable: `false` waits for the replies even if the caller is cancelled (writes).
    ///   - preferred: a connection of the caller's own to use for a node
    ///     (a level's tracking connection to that master), if it has one.
    func send(batch commands: [[[UInt8]]], slot: Int?, guarded: Bool = true, cancellable: Bool = true,
              preferred: (@Sendable (String) -> RedisConnection?)? = nil) async throws -> [RESPValue] {
        try await send(building: { _ in commands }, slot: slot, guarded: guarded, cancellable: cancellable, preferred: preferred)
    }

    /// ``send(batch:slot:guarded:cancellable:preferred:)`` of the commands
    /// `build` makes for the client of the node each attempt goes to (a
    /// write's deadline on that node's clock: ``RedisServerClock``); it
    /// returns the same number of commands every time.
    func send(building build: (RedisClient) async throws -> [[[UInt8]]], slot: Int?, guarded: Bool = true,
              cancellable: Bool = true, preferred: (@Sendable (String) -> RedisConnection?)? = nil) async throws -> [RESPValue] {
        var replies: [RESPValue?] = []
        var pending: [Int] = []
        var asking: String?  // an ASK's target, for the next attempt only
        var redirects = 0
        while true {
            let address: String
            if let asking { address = asking } else if let slot { address = try await self.address(ofSlot: slot) } else {
                address = try await anyMaster()
            }
            var answers = try await onNode(address) { client in
                let commands = try await build(client)
                if replies.isEmpty {
                    replies = Array(repeating: nil, count: commands.count)
                    pending = Array(commands.indices)
                }
                let outgoing = pending.map { commands[$0] }
                let wire = asking == nil ? outgoing : outgoing.flatMap { [[RedisClusterRouter.asking], $0] }
                if let own = preferred?(address) { return try await own.send(batch: wire, cancellable: cancellable) }
                return try await client.send(batch: wire, guarded: guarded, cancellable: cancellable)
            }
            if asking != nil { answers = stride(from: 1, to: answers.count, by: 2).map { answers[$0] } }
            var again: [Int] = []
            var redirect: RedisClusterRedirect?
            for (position, index) in pending.enumerated() {
                if let found = RedisClusterRedirect(answers[position]) {
                    again.append(index)
                    redirect = redirect ?? found
                } else {
                    replies[index] = answers[position]
                }
            }
            guard let redirect else { return replies.map { $0! } }
            redirects += 1
            asking = try await follow(redirect, from: address, count: redirects, asking: asking)
            pending = again
        }
    }

    /// `commands` on keys of any slots: one write per master (the map's
    /// owner of each command's slot), all at once; a command redirected is
    /// then sent alone, following its redirects. Replies in the commands' order.
    func send(routedBatch commands: [[[UInt8]]], guarded: Bool = true, cancellable: Bool = true,
              preferred: (@Sendable (String) -> RedisConnection?)? = nil) async throws -> [RESPValue] {
        let slots = commands.map(Self.slot(ofCommand:))
        var topology = state.withLock { $0.topology } ?? RedisClusterTopology()
        if topology.masters.isEmpty { topology = try await refreshTopology() }
        var byNode: [String: [Int]] = [:]
        for (index, slot) in slots.enumerated() {
            guard let address = slot.map(topology.master(ofSlot:)) ?? topology.masters.first else {
                throw RedisError.unavailable("no master serves slot \(slot ?? -1) (CLUSTER SLOTS lists none)")
            }
            byNode[address, default: []].append(index)
        }
        return try await withThrowingTaskGroup(of: ([Int], [RESPValue]).self) { group in
            for (address, indices) in byNode {
                group.addTask {
                    let batch = indices.map { commands[$0] }
                    var answers: [RESPValue]
                    if let own = preferred?(address) {
                        answers = try await self.onNode(address) { _ in try await own.send(batch: batch, cancellable: cancellable) }
                    } else {
                        answers = try await self.onNode(address) { try await $0.send(batch: batch, guarded: guarded, cancellable: cancellable) }
                    }
                    for (position, index) in indices.enumerated() {
                        guard let redirect = RedisClusterRedirect(answers[position]) else { continue }
                        if case .malformed(let message) = redirect { throw RedisClusterRedirect.error(message, from: address) }
                        if case .moved(let slot, let target) = redirect {
                            self.movedCount.add(1, ordering: .relaxed)
                            self.moved(slot: slot, to: Self.resolved(target, answeredBy: address))
                        }
                        answers[position] = try await self.send(batch: [commands[index]], slot: slots[index], guarded: guarded,
                                                                cancellable: cancellable, preferred: preferred)[0]
                    }
                    return (indices, answers)
                }
            }
            var replies = [RESPValue](repeating: .null, count: commands.count)
            for try await (indices, answers) in group {
                for (index, answer) in zip(indices, answers) { replies[index] = answer }
            }
            return replies
        }
    }

    /// One command (see ``send(batch:slot:guarded:cancellable:)``).
    func send(_ command: [[UInt8]], slot: Int?, guarded: Bool = true) async throws -> RESPValue {
        try await send(batch: [command], slot: slot, guarded: guarded)[0]
    }

    /// A transaction on keys of one slot (`MULTI` … `EXEC` on its master; after
    /// an `ASK`, `ASKING` first). A redirect of any of its commands discards
    /// it on the server, so it is sent again whole.
    func send(transaction commands: [[[UInt8]]], slot: Int) async throws -> [RESPValue] {
        var asking: String?
        var redirects = 0
        while true {
            let address: String
            if let asking { address = asking } else { address = try await self.address(ofSlot: slot) }
            do {
                let prefix = asking == nil ? [] : [[RedisClusterRouter.asking]]
                return try await onNode(address) { try await $0.send(transaction: commands, prefix: prefix) }
            } catch RedisError.server(let message) {
                guard let redirect = RedisClusterRedirect(message: message) else { throw RedisError.server(message) }
                redirects += 1
                asking = try await follow(redirect, from: address, count: redirects, asking: asking)
            }
        }
    }

    /// Acts on `redirect` (the `count`th for one command, answered by `address`):
    /// returns the node to ask next, or `nil` for the slot's master per the map.
    private func follow(_ redirect: RedisClusterRedirect, from address: String, count: Int, asking: String?) async throws -> String? {
        guard count <= Self.maxRedirects else {
            throw RedisError.tooManyRedirects("\(count) redirects for one command, the last \(redirect) from \(address)")
        }
        switch redirect {
        case .moved(let slot, let target):
            movedCount.add(1, ordering: .relaxed)
            moved(slot: slot, to: Self.resolved(target, answeredBy: address))
            return nil
        case .ask(_, let target):
            askCount.add(1, ordering: .relaxed)
            return Self.resolved(target, answeredBy: address)
        case .tryAgain:
            try await Task.sleep(for: .milliseconds(10 << min(count - 1, 6)))
            return asking  // the same node once more (an ASK target stays one)
        case .malformed(let message):
            throw RedisClusterRedirect.error(message, from: address)
        }
    }

    /// Runs `body` with the client of the node at `address`; a failure to
    /// reach it names the node. A timeout or a connection lost with the
    /// request in flight (errors without words) becomes
    /// ``RedisError/unavailable(_:)`` naming the node: the level and the
    /// breaker treat the three alike (no answer), and on a cluster which
    /// node did not answer is what matters.
    private func onNode<T>(_ address: String, _ body: (RedisClient) async throws -> T) async throws -> T {
        do {
            return try await body(try node(address))
        } catch RedisError.unavailable(let text) where !text.contains(address) {
            throw RedisError.unavailable("\(address): \(text)")
        } catch RedisError.timeout {
            throw RedisError.unavailable("\(address): no reply within the command timeout (the connection was closed)")
        } catch RedisError.connectionClosed where !isClosed {
            throw RedisError.unavailable("\(address): the connection closed with the request in flight")
        }
    }

    private var isClosed: Bool { state.withLock { $0.closed } }

    /// Gets a connection to the master of `slot` ready (connected), so a
    /// write's time left is measured after any connect.
    func warm(slot: Int) async throws {
        let address = try await address(ofSlot: slot)
        _ = try await onNode(address) { try await $0.connection() }
    }

    /// Closes every node's connections; later requests fail.
    func shutdown() async {
        let nodes = state.withLock { state -> [RedisClient] in
            state.closed = true
            state.refresh?.cancel()
            return Array(state.nodes.values)
        }
        for node in nodes { await node.shutdown() }
    }

    static let asking = Array("ASKING".utf8)

    /// A redirect's target with the host filled in when Redis left it out
    /// (`?:7001`, see ``RedisClusterRedirect``): the host of the node that answered.
    static func resolved(_ target: String, answeredBy address: String) -> String {
        guard target.hasPrefix("?:") else { return target }
        return String(address[..<address.lastIndex(of: ":")!]) + target.dropFirst()
    }

    /// The slot of the key `command` names, or `nil` for a command without
    /// one (`PING`, `INFO`, `CLIENT`, `SCAN` …): `EVAL`'s first key,
    /// `OBJECT`'s second argument, else its first argument.
    static func slot(ofCommand command: [[UInt8]]) -> Int? {
        guard command.count > 1 else { return nil }
        let name = command[0]
        if name.elementsEqual("EVAL".utf8) || name.elementsEqual("EVALSHA".utf8) {
            guard command.count > 3, command[2] != Array("0".utf8) else { return nil }
            return RedisClusterSlot.of(command[3])
        }
        if name.elementsEqual("OBJECT".utf8) { return command.count > 2 ? RedisClusterSlot.of(command[2]) : nil }
        if keyless.contains(String(decoding: name, as: UTF8.self).uppercased()) { return nil }
        return RedisClusterSlot.of(command[1])
    }

    private static let keyless: Set<String> = [
        "PING", "INFO", "CLIENT", "CLUSTER", "SCAN", "CONFIG", "DBSIZE", "FLUSHDB", "FLUSHALL", "HELLO", "AUTH",
        "SELECT", "TIME", "DEBUG", "SCRIPT", "FUNCTION", "MULTI", "EXEC", "ECHO", "COMMAND", "ACL", "MEMORY",
    ]
}
