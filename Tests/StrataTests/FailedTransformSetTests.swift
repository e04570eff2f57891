import Strata
import Testing

/// A set whose value transformation fails (not a declined condition: an
/// error) fails, and must not leave the value it was replacing readable.
@Suite struct FailedTransformSetTests {
    @Test func failingInverseTransformLeavesNoOlderValueBehind() async throws {
        let memory = MemoryCacheLevel<String, String>(capacity: 1000)
        let strict = memory.mapValues({ $0 }, inverse: { (value: String) -> String in
            if value.isEmpty { throw TestError("empty") }
            return value
        })
        try await strict.set("old", forKey: "k")
        await #expect(throws: LevelFailure.self) { try await strict.set("", forKey: "k") }
        #expect(try await strict.getIfPresent("k") == nil, "a failed set left the value it was replacing readable")
    }
}
