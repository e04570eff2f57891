import Strata
import Synchronization
import Testing

/// `values(forKey:)` must never yield a reading older than one it has
/// already yielded: once the stream has shown a set's value, showing the
/// value that set replaced (as the `.fresh`, final answer) brings an
/// overwritten value back.
@Suite struct StaleThenFreshOrderTests {
    /// A store whose sets wait on a gate (a slow origin write).
    final class SlowSetLevel: CacheLevel {
        let name = "slow-set"
        let storage: Mutex<[String: String]>
        let gate = Gate()
        init(_ initial: [String: String]) { storage = Mutex(initial) }
        func getIfPresent(_ key: String) async throws -> String? { storage.withLock { $0[key] } }
        func set(_ value: String, forKey key: String) async throws {
            try await gate.wait()
            storage.withLock { $0[key] = value }
        }
        func remove(_ key: String) async throws { _ = storage.withLock { $0.removeValue(forKey: key) } }
        func clear() async { storage.withLock { $0.removeAll() } }
        func onMemoryWarning() async {}
    }

    @Test func aReadingOlderThanOneAlreadyYieldedIsNeverYielded() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        try await memory.set("v1", forKey: "k")
        let origin = SlowSetLevel(["k": "v1"])
        let cache = memory + origin
        // A set of v2 is under way: memory already has it, the origin not yet.
        let writer = Task { try await cache.set("v2", forKey: "k") }
        #expect(await poll { memory.value(forKey: "k") == "v2" && origin.gate.waiting == 1 })

        var readings: [CacheReading<String>] = []
        for try await reading in cache.values(forKey: "k") { readings.append(reading) }
        origin.gate.open()
        try await writer.value

        let values = readings.map(\.value)
        if let shown = values.firstIndex(of: "v2") {
            #expect(!values[shown...].contains("v1"), "the stream went back from v2 to v1: \(readings)")
        }
        #expect(try await cache.getIfPresent("k") == "v2")
    }
}
