import Foundation
import Strata
import Testing

/// Review of #32.5 ("every get throws FetchError naming the level and the
/// key"): shapes where a get still throws something else, or a FetchError
/// naming no level or key, or a level other than the one asked.
@Suite struct FetchErrorReviewTests {
    struct Broken: Error, Equatable {}

    /// Stale-then-fresh is a get as a stream: a lower level that fails ends it
    /// with the level's own error (here `Broken`), not a FetchError.
    @Test func staleThenFreshEndsWithAFetchErrorWhenTheLowerLevelFails() async throws {
        let broken = FakeLevel<String, Int>(name: "db"); broken.failGets(with: Broken())
        let stack = MemoryCacheLevel<String, Int>(capacity: 10) + broken
        var thrown: (any Error)?
        do { for try await _ in stack.values(forKey: "user:7") {} } catch { thrown = error }
        let error = try #require(thrown)
        let fetch = error as? FetchError
        #expect(fetch != nil, "values(forKey:) ended with \(type(of: error)): \(error)")
        #expect(fetch?.reason == .levelsFailed && fetch?.level == "memory + db" && fetch?.key == "user:7")
        #expect(fetch?.cause(as: Broken.self) != nil)
    }

    /// Its miss is `FetchError.valueNotInCache` naming neither the stack nor the key.
    @Test func staleThenFreshMissNamesTheStackAndTheKey() async throws {
        let stack = MemoryCacheLevel<String, Int>(capacity: 10) + FakeLevel<String, Int>(name: "db")
        var thrown: (any Error)?
        do { for try await _ in stack.values(forKey: "user:7") {} } catch { thrown = error }
        let fetch = try #require(thrown as? FetchError)
        #expect(fetch.reason == .valueNotInCache)
        #expect(fetch.level == "memory + db" && fetch.key == "user:7", "\(fetch)")
    }

    /// A loader that says "not found" the Carlos way (`throw FetchError.valueNotInCache`)
    /// makes the loading get throw a FetchError with an empty level and key:
    /// `FetchError.failed` passes any FetchError through untouched.
    @Test func aLoaderThrowingFetchErrorStillNamesTheStackAndKey() async throws {
        let stack = MemoryCacheLevel<String, Int>(capacity: 10) + FakeLevel<String, Int>(name: "db")
        let error = await #expect(throws: FetchError.self) {
            try await stack.get("user:7", ttl: .seconds(60)) { _ in throw FetchError.valueNotInCache }
        }
        #expect(error?.level == "memory + db" && error?.key == "user:7", "\(String(describing: error))")
    }

    /// A loader that applies a conditioned transformer which declines: the
    /// loading get throws `conditionNotSatisfied`, a reason documented as
    /// never seen by callers of a level, naming neither level nor key.
    @Test func aLoadingGetNeverThrowsConditionNotSatisfied() async throws {
        let stack = MemoryCacheLevel<String, Int>(capacity: 10) + FakeLevel<String, Int>(name: "db")
        let positive = OneWayTransformationBox<Int, Int>(transform: { $0 }).conditioned { $0 > 0 }
        let error = await #expect(throws: FetchError.self) {
            try await stack.get("user:7", ttl: .seconds(60)) { _ in try await positive.transform(-1) }
        }
        #expect(error?.reason != .conditionNotSatisfied, "\(String(describing: error))")
        #expect(error?.level == "memory + db" && error?.key == "user:7", "\(String(describing: error))")
    }

    /// A closure level over another cache's get that fails: the closure
    /// level's get names the inner level, not the level asked.
    @Test func aClosureLevelsFailureNamesTheClosureLevel() async throws {
        let broken = FakeLevel<String, Int>(name: "db"); broken.failGets(with: Broken())
        let api = BasicFetcher<String, Int>(name: "api") { try await broken.get($0) }
        let error = await #expect(throws: FetchError.self) { try await api.get("user:7") }
        #expect(error?.reason == .levelsFailed && error?.cause(as: Broken.self) != nil)
        #expect(error?.level == "api", "\(String(describing: error))")
    }
}
