@testable import Strata
import Testing

/// A refresh-ahead fraction that is not a number (a config value parsed
/// wrong, `0.0 / 0.0`) is bad input: every loading get refuses it with
/// ``ResilienceError/invalidRefreshAhead(_:)`` naming it (the cause of the
/// get's `FetchError`, as a negative TTL is), on a miss and on a hit, never
/// kept as a fraction that no comparison can place.
@Suite struct InvalidRefreshAheadTests {
    static func stack() -> (MemoryCacheLevel<String, String>, ComposedCache<MemoryCacheLevel<String, String>, BasicFetcher<String, String>>) {
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        return (memory, memory + BasicFetcher<String, String> { _ in nil })
    }

    @Test func aNaNFractionIsRefusedByEveryLoadingGet() async throws {
        let (memory, stack) = Self.stack()
        let cache = stack.refreshAhead(at: .nan)
        let miss = try await #require(throws: FetchError.self) { try await cache.get("k", ttl: .seconds(60)) { _ in "v" } }
        #expect(miss.cause(as: ResilienceError.self) == .invalidRefreshAhead("nan"), "\(miss)")
        #expect(memory.value(forKey: "k") == nil, "nothing was loaded")
        // A hit the top level answers without suspending is refused too.
        try await memory.set("held", forKey: "h", expiresAt: SystemClock().now().advanced(by: .seconds(60)))
        let hit = try await #require(throws: FetchError.self) { try await cache.get("h", ttl: .seconds(60)) { _ in "v" } }
        #expect(hit.cause(as: ResilienceError.self) == .invalidRefreshAhead("nan"))
        #expect(cache.resilienceStatistics.refreshesStarted == 0)
    }

    @Test func everyWayToGiveTheFractionIsChecked() async throws {
        let (_, stack) = Self.stack()
        let caches = [
            ResilientCache(stack, options: ResilienceOptions(refreshAhead: .nan)),
            stack.failSafe(maxStale: .seconds(60)).refreshAhead(at: -.nan),
            ResilientCache(stack, options: { var options = ResilienceOptions(); options.refreshAhead = .nan; return options }()),
        ]
        for (index, cache) in caches.enumerated() {
            let error = try await #require(throws: FetchError.self) { try await cache.get("k", ttl: .seconds(60)) { _ in "v" } }
            #expect(error.cause(as: ResilienceError.self) != nil, "cache \(index): \(error)")
        }
        let text = ResilienceError.invalidRefreshAhead("nan").description
        #expect(text == "invalid refresh-ahead fraction nan: it must be a number (0 to 1)")
    }

    /// Numbers out of range keep their documented meaning: clamped to 0...1.
    @Test func numbersOutOfRangeAreStillClamped() async throws {
        let (_, stack) = Self.stack()
        #expect(stack.refreshAhead(at: 2).options.refreshAhead == 1)
        #expect(stack.refreshAhead(at: -.infinity).options.refreshAhead == 0)
        #expect(try await stack.refreshAhead(at: .infinity).get("k", ttl: .seconds(60)) { _ in "v" } == "v")
    }
}
