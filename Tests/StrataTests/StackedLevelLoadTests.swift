import Strata
import Synchronization
import Testing

/// Load-through on a single level (`level.stacked()`).
@Suite struct StackedLevelLoadTests {
    /// 100 concurrent gets of one missing key: one load, every caller gets
    /// its answer, the level keeps it with the loader's TTL.
    @Test func concurrentMissesLoadOnceAndTheValueKeepsItsTTL() async throws {
        let clock = TestClock()
        let memory = MemoryCacheLevel<String, String>(countLimit: 100, clock: clock)
        let users = memory.stacked()
        let loads = LoadThroughTests.Counter()
        let gate = Gate()
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await users.get("u1", ttl: .seconds(60)) { key in
                        _ = loads.next()
                        try await gate.wait()
                        return "user \(key)"
                    }
                }
            }
            #expect(await poll { users.loadsJoined == 99 }, "the 99 other callers joined the load")
            gate.open()
            for try await answer in group { #expect(answer == "user u1") }
        }
        #expect(loads.count == 1)
        await users.waitForPendingWrites()
        #expect(memory.value(forKey: "u1") == "user u1")
        clock.advance(by: .seconds(61))
        #expect(memory.value(forKey: "u1") == nil, "the loaded value outlived its TTL")
    }

    /// A set through the stack while the loader runs is not undone by the
    /// load's answer (the caller still gets what it loaded).
    @Test func aSetWhileLoadingIsNotUndone() async throws {
        let memory = MemoryCacheLevel<String, String>(countLimit: 100)
        let users = memory.stacked()
        let gate = Gate()
        let started = LoadThroughTests.Counter()
        let load = Task {
            try await users.get("u1", ttl: nil) { _ in
                _ = started.next()
                try await gate.wait()
                return "old"
            }
        }
        #expect(await poll { started.count == 1 })
        try await users.set("new", forKey: "u1")
        gate.open()
        #expect(try await load.value == "old")
        await users.waitForPendingWrites()
        #expect(try await users.get("u1") == "new", "the load's answer undid the set")
    }

    /// "Not found" with its own TTL: the loader is not asked again meanwhile.
    @Test func notFoundIsRemembered() async throws {
        let users = MemoryCacheLevel<String, String>(countLimit: 100).stacked()
        let loads = LoadThroughTests.Counter()
        for _ in 0..<3 {
            let found = try await users.get("ghost") { _ -> Loaded<String> in
                _ = loads.next()
                return .notFound(ttl: .seconds(30))
            }
            #expect(found == nil)
        }
        #expect(loads.count == 1)
    }
}
