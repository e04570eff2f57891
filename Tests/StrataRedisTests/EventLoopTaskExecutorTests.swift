import Foundation
import NIOCore
import NIOPosix
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// ``EventLoopTaskExecutor``: tasks that prefer a Redis level's executor run
/// on its event loops, are resumed on the loop that read their reply, and
/// get the same answers as anywhere else.
@Suite(.serialized) struct EventLoopTaskExecutorTests {
    /// The event loop the current thread runs, if any.
    static func currentLoop() -> (any EventLoop)? { MultiThreadedEventLoopGroup.currentEventLoop }

    /// With four loops in the group, a task that awaits replies is only ever
    /// on the loop it was on (the reply came before it suspended) or on the
    /// loop that read the reply (the connection's): never on another one,
    /// and never off the loops.
    @Test func aTaskThatPrefersTheExecutorFollowsTheLoopThatReadItsReply() async throws {
        let server = try await RedisServer()
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 4)
        let client = RedisClient(configuration: try RedisConfiguration(url: server.url, connections: 1), group: group)
        let connectionLoop = try await client.connection().channel.eventLoop
        let (resumedElsewhere, onConnectionLoop) = try await withTaskExecutorPreference(client.taskExecutor) {
            var elsewhere = 0, onConnection = 0
            for _ in 0..<50 {
                let before = Self.currentLoop()
                _ = try await client.send([Array("PING".utf8)])
                let after = Self.currentLoop()
                if after === connectionLoop { onConnection += 1 } else if after == nil || after !== before { elsewhere += 1 }
            }
            return (elsewhere, onConnection)
        }
        #expect(resumedElsewhere == 0)
        #expect(onConnectionLoop > 0, "after a suspended await the task runs where the reply was read")
        #expect(Self.currentLoop() == nil, "without the preference the task is back on the global executor")
        await client.shutdown()
        try await group.shutdownGracefully()
        await server.kill()
    }

    /// 16 tasks on the loop, each on its own keys, pipelined on one
    /// connection: every read returns what that task last wrote.
    @Test func concurrentTasksOnTheLoopGetTheirOwnAnswers() async throws {
        let server = try await RedisServer()
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "exec:", codec: .string, connections: 1,
                                                        invalidatesLevelsAbove: false)
        let wrong = await withTaskExecutorPreference(level.taskExecutor) {
            await withTaskGroup(of: Int.self) { group in
                for task in 0..<16 {
                    group.addTask {
                        var wrong = 0
                        for i in 0..<200 {
                            let key = "t\(task)-\(i % 7)", value = "\(task)/\(i)"
                            do {
                                try await level.set(value, forKey: key)
                                if try await level.getIfPresent(key) != value { wrong += 1 }
                                if Self.currentLoop() == nil { wrong += 1 }
                            } catch {
                                wrong += 1
                            }
                        }
                        return wrong
                    }
                }
                return await group.reduce(0, +)
            }
        }
        #expect(wrong == 0)
        await level.shutdown()
        await server.kill()
    }

    /// A composition above the level works the same under the preference:
    /// a miss reaches the origin and is back-filled into Redis, and the next
    /// read is answered without the origin.
    @Test func aCompositionUnderThePreferenceBackfills() async throws {
        let server = try await RedisServer()
        let redis = try RedisCacheLevel<String, String>(url: server.url, prefix: "exec:", codec: .string, connections: 1)
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let originReads = Atomic<Int>(0)
        let cache = memory + redis + BasicFetcher<String, String> { key in
            originReads.add(1, ordering: .relaxed)
            return "origin:\(key)"
        }
        let first = try await withTaskExecutorPreference(redis.taskExecutor) { try await cache.get("user:7") }
        #expect(first == "origin:user:7")
        // A back-fill whose reply comes later than the margin is declined
        // (a loaded machine): read again until one has landed.
        #expect(await poll(timeout: .seconds(20)) {
            _ = try? await withTaskExecutorPreference(redis.taskExecutor) { try await cache.get("user:7") }
            return (try? await redis.getIfPresent("user:7")) == "origin:user:7"
        }, "back-filled into Redis")
        let reads = originReads.load(ordering: .relaxed)
        let again = try await withTaskExecutorPreference(redis.taskExecutor) { try await cache.get("user:7") }
        #expect(again == "origin:user:7")
        #expect(originReads.load(ordering: .relaxed) == reads, "answered from Redis or memory, not the origin")
        await redis.shutdown()
        await server.kill()
    }
}
