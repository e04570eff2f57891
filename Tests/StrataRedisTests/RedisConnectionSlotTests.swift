import Foundation
import NIOCore
import NIOPosix
@testable import StrataRedis
import StrataTestSupport
import Testing

/// The pool's connection slots: one connect per slot shared by its callers,
/// every channel closed exactly once, backoff doubled once per failed connect.
@Suite(.serialized) struct RedisConnectionSlotTests {
    /// Connections the server lists (`CLIENT LIST`) with this client name.
    func connections(named name: String, _ observer: RedisClient) async throws -> Int {
        guard case .bulkString(let buffer?) = try await observer.send("CLIENT", "LIST") else { return -1 }
        return String(buffer: buffer).split(separator: "\n").filter { $0.contains(" name=\(name) ") }.count
    }

    /// Polls (the server notices a close asynchronously) until `expected` or 5 s.
    func settledConnections(named name: String, _ observer: RedisClient, expected: Int) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let count = try await connections(named: name, observer)
            if count == expected || ContinuousClock.now >= deadline { return count }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Connects for real, then names the connection so `CLIENT LIST` can tell it apart.
    static func namedConnect(_ name: String, _ configuration: RedisConfiguration,
                             _ group: any EventLoopGroup) async throws -> RedisConnection {
        let connection = try await RedisConnection.connect(configuration, group: group)
        _ = try await connection.send(["CLIENT", "SETNAME", name].map { Array($0.utf8) })
        return connection
    }

    func observer(_ server: RedisServer) throws -> RedisClient {
        RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1))
    }

    @Test func racingFirstGetsShareOneConnectPerSlotAndLeaveNothingOpenAfterShutdown() async throws {
        let server = try await RedisServer()
        let observer = try observer(server)
        let rounds = ProcessInfo.processInfo.environment["STRATA_REDIS_RACE_ROUNDS"].flatMap(Int.init) ?? 25
        for round in 0..<rounds {
            let attempts = Counter()
            let name = "race-\(round)"
            let client = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 4),
                                     group: MultiThreadedEventLoopGroup.singleton) { configuration, group in
                attempts.increment()
                return try await Self.namedConnect(name, configuration, group)
            }
            let failures = Counter()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<400 {
                    group.addTask { if (try? await client.send("GET", "k")) == nil { failures.increment() } }
                }
            }
            #expect(try await connections(named: name, observer) == 4, "round \(round): the pool's connections are listed")
            await client.shutdown()
            let left = try await settledConnections(named: name, observer, expected: 0)
            #expect(failures.value == 0, "round \(round)")
            #expect(attempts.value == 4, "round \(round): one connect per slot, shared by its 100 callers")
            #expect(left == 0, "round \(round): connections left open after shutdown()")
            if left != 0 || attempts.value != 4 { break }
        }
        await observer.shutdown(); await server.kill()
    }

    @Test func connectFinishingAfterShutdownIsClosedAndItsWaitersFail() async throws {
        let server = try await RedisServer()
        let observer = try observer(server)
        let entered = Gate(), release = Gate()
        let client = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1),
                                 group: MultiThreadedEventLoopGroup.singleton) { configuration, group in
            entered.open()
            await release.wait()  // the connect is held until shutdown() has run
            return try await Self.namedConnect("late", configuration, group)
        }
        async let get = Result(catching: { try await client.send("PING") })
        await entered.wait()
        async let shutdown: Void = client.shutdown()
        let deadline = ContinuousClock.now + .seconds(2)
        while !client.isShutDown, ContinuousClock.now < deadline { await Task.yield() }
        #expect(client.isShutDown)
        release.open()
        await shutdown
        let outcome = await get
        #expect(throws: RedisError.connectionClosed) { try outcome.get() }
        #expect(try await settledConnections(named: "late", observer, expected: 0) == 0, "the late connection was closed")
        await #expect(throws: RedisError.connectionClosed) { try await client.send("PING") }
        await observer.shutdown(); await server.kill()
    }

    @Test func failedConnectDoublesBackoffOnceNotOncePerWaiter() async throws {
        let attempts = Counter()
        let release = Gate()
        let client = RedisClient(configuration: try RedisConfiguration(url: "redis://127.0.0.1:1", connections: 1),
                                 group: MultiThreadedEventLoopGroup.singleton) { configuration, group in
            attempts.increment()
            await release.wait()  // every caller joins this connect before it fails
            return try await RedisConnection.connect(configuration, group: group)
        }
        #expect(client.backoff(slot: 0) == .milliseconds(50))
        let waiters = 20
        async let outcomes = withTaskGroup(of: Result<RESPValue, any Error>.self) { group in
            for _ in 0..<waiters { group.addTask { await Result(catching: { try await client.send("PING") }) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let deadline = ContinuousClock.now + .seconds(2)
        while client.connectWaiters(slot: 0) < waiters, ContinuousClock.now < deadline { await Task.yield() }
        #expect(client.connectWaiters(slot: 0) == waiters)
        release.open()
        let results = await outcomes
        #expect(results.count == waiters)
        for result in results {
            #expect(throws: RedisError.self) { try result.get() }
        }
        #expect(attempts.value == 1, "one connect shared by \(waiters) callers")
        #expect(client.backoff(slot: 0) == .milliseconds(100), "doubled once, for one failed connect")
        await client.shutdown()
    }
}
