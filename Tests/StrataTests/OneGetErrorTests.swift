import Foundation
import Strata
import Testing

/// A get throws one error type, `FetchError`, whatever the pipeline's shape
/// (#32): a single level, a stack, erased, normalized, pooled, transformed,
/// fail-safe, loading; it names the level and the key, and its cause is
/// reachable by type. (Before, the type depended on the shape: a bare
/// level's own error, `LevelsFailedError`, `LevelFailure`, a loader's error.)
@Suite struct OneGetErrorTests {
    struct Broken: Error, Equatable {}

    /// Each shape over a level that fails gets, with the name the error must carry.
    static func failingShapes() -> [(name: String, get: @Sendable (String) async throws -> Int)] {
        let broken = FakeLevel<String, Int>(name: "db"); broken.failGets(with: Broken())
        let memory = MemoryCacheLevel<String, Int>(capacity: 100)
        let stack = memory + broken
        let erased: any CacheLevel<String, Int> = stack
        let normalized = stack.normalize()
        let pooled = broken.pooled()
        let transformed = broken.mapValues({ $0 }, inverse: { $0 })
        let resilient = stack.failSafe(maxStale: .seconds(60))
        return [
            ("db", { try await broken.get($0) }),
            ("memory + db", { try await stack.get($0) }),
            ("memory + db", { try await erased.get($0) }),
            ("memory + db", { try await normalized.get($0) }),
            ("db", { try await pooled.get($0) }),
            ("db", { try await transformed.get($0) }),
            ("memory + db", { try await resilient.get($0) }),
            ("memory + db", { try await stack.get($0, ttl: .seconds(1)) { _ in throw Broken() } }),
        ]
    }

    @Test(arguments: 0..<8)
    func aFailureIsAFetchErrorNamingLevelKeyAndCause(shape: Int) async throws {
        let (name, get) = Self.failingShapes()[shape]
        do {
            _ = try await get("user:7")
            Issue.record("shape \(shape) answered")
        } catch let error as FetchError {
            #expect(error.reason == .levelsFailed)
            #expect(error.level == name, "shape \(shape): \(error)")
            #expect(error.key == "user:7")
            #expect(error.cause(as: Broken.self) != nil, "shape \(shape): \(error)")
            #expect(!error.isMiss)
            #expect("\(error)".hasPrefix("\(name): ") && "\(error)".contains("user:7"), "\(error)")
        }
    }

    @Test func aMissIsAFetchErrorMatchedAsBeforeAndNamingLevelAndKey() async throws {
        let memory = MemoryCacheLevel<String, Int>(capacity: 100)
        let stack = memory + FakeLevel<String, Int>(name: "db")
        let erased: any CacheLevel<String, Int> = memory
        let shapes: [(String, @Sendable (String) async throws -> Int)] = [
            ("memory + db", { @Sendable in try await stack.get($0) }), ("memory", { @Sendable in try await erased.get($0) }),
        ]
        for (name, get) in shapes {
            do {
                _ = try await get("k")
                Issue.record("answered")
            } catch FetchError.valueNotInCache {
                // The pattern users wrote for the enum still matches.
            }
            let error = await #expect(throws: FetchError.valueNotInCache) { try await get("k") }
            #expect(error?.level == name && error?.key == "k" && error?.isMiss == true)
            #expect(error.map { "\($0)" } == "\(name): get k: no level had a value")
        }
    }

    /// A closure level that calls another cache's `get`: that cache's miss
    /// is this level's miss; its failure stays a failure, never a miss.
    @Test func aClosureLevelTellsANestedFailureFromANestedMiss() async throws {
        let broken = FakeLevel<String, Int>(name: "db"); broken.failGets(with: Broken())
        let empty = FakeLevel<String, Int>(name: "empty")
        let overBroken = BasicFetcher<String, Int>(name: "api") { try await broken.get($0) }
        let overEmpty = BasicFetcher<String, Int>(name: "api") { try await empty.get($0) }
        #expect(try await overEmpty.getIfPresent("k") == nil)
        let error = await #expect(throws: FetchError.self) { try await overBroken.get("k") }
        #expect(error?.reason == .levelsFailed && error?.cause(as: Broken.self) != nil)
    }

    @Test func cancellationStaysCancellation() async throws {
        let gate = Gate()
        let held = FakeLevel<String, Int>(name: "db"); held.holdGets(on: gate)
        let task = Task { try await (MemoryCacheLevel<String, Int>(capacity: 10) + held).get("k") }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        gate.open()
    }
}

/// `catch FetchError.levelsFailed` matches a failure naming any level and key.
@Suite struct FetchErrorMatchingTests {
    @Test func levelsFailedMatchesAsAPattern() async throws {
        let broken = FakeLevel<String, Int>(name: "db"); broken.failGets(with: OneGetErrorTests.Broken())
        do {
            _ = try await broken.get("k")
            Issue.record("answered")
        } catch FetchError.valueNotInCache {
            Issue.record("a failure matched as a miss")
        } catch FetchError.levelsFailed {
            // expected
        }
    }
}
