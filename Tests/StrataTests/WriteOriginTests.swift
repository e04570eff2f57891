@testable import Strata
import Synchronization
import Testing

/// `CacheWriteOrigin`: which compositions a write passed through, so that a
/// shared store's report of it is skipped by them alone.
@Suite struct WriteOriginTests {
    /// A user closure met on a write (here a condition) runs outside it: a
    /// write the closure makes through another composition is reported to
    /// this one too.
    @Test func userCodeOnAWriteRunsOutsideTheWritesOrigin() async throws {
        let seen = Mutex<[Int]>([])
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let lower = MemoryCacheLevel<String, String>(capacity: 1 << 20).conditioned { _ in
            seen.withLock { $0.append(CacheContext.writeOrigin.writers.count) }
            return true
        }
        let cache = memory + lower
        try await cache.set("v", forKey: "k")
        #expect(seen.withLock { $0 } == [0])
        // Outside user code, the write carries the compositions it passed through.
        let origins = Mutex<[Int]>([])
        let recording = memory + RecordingLevel { origins.withLock { $0.append(CacheContext.writeOrigin.writers.count) } }
        try await (memory + recording).set("v", forKey: "k")
        #expect(origins.withLock { $0 } == [2])
    }

    /// A level that runs `onSet` on each set and stores nothing.
    struct RecordingLevel: CacheLevel {
        let onSet: @Sendable () -> Void
        var name: String { "recording" }
        func getIfPresent(_ key: String) async throws -> String? { nil }
        func set(_ value: String, forKey key: String) async throws { onSet() }
        func remove(_ key: String) async throws {}
        func clear() async {}
        func onMemoryWarning() async {}
    }
}
