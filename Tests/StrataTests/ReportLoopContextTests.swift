import Foundation
import Strata
import StrataTestSupport
import Testing

/// A level's report loop (the task that delivers what its store reports)
/// starts with none of the registering task's task-locals: a request that
/// happened to build the composition must not go on receiving the events of
/// every later invalidation in its trace.
@Suite struct ReportLoopContextTests {
    @Test func aDiskLevelsReportsDoNotReachTheTraceOfTheRequestThatRegistered() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        try await disk.set(Data("old".utf8), forKey: "k")
        let trace = RequestTrace()
        // The composition (and with it the disk level's report loop) is made
        // inside a traced request.
        let cache = try await trace.record {
            let cache = memory.instrumented(name: "L1") + disk
            _ = try await cache.getIfPresent("k")
            return cache
        }
        await cache.waitForPendingWrites()
        #expect(try await memory.getIfPresent("k") == Data("old".utf8))
        let during = trace.events.count

        // Another writer changes the key: L1 drops it, in the report loop.
        let other = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 1 << 20)
        try await other.set(Data("new".utf8), forKey: "k")
        #expect(await poll { cache.invalidationsApplied >= 1 })
        #expect(try await memory.getIfPresent("k") == nil)
        #expect(trace.events.count == during,
                "the finished request's trace received \(trace.events.dropFirst(during).map(\.description))")
    }
}
