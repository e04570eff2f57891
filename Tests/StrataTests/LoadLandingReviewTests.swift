import Foundation
import Strata
import Testing

/// Review of #32.1 (a get arriving while a load lands joins that load): the
/// joiners are answered the load's value, so no write that ended before a
/// joiner's get began may be hidden by it. A write through the stack waits
/// for the landing's stripe and detaches the load when admitted (a change
/// reported from below detaches it before it waits; what the lower level
/// keeps of a landing that overlapped such a change is the level's to refuse:
/// SET NX and tombstones). These hold the landing (the lower level's
/// back-fill) and check that a get begun after a remove through the stack
/// returned never answers the loaded value.
@Suite struct LoadLandingReviewTests {
    /// `memory + db` whose back-fill into `db` is held on `gate`, with a load of "k" landing.
    static func landingHeld() async throws -> (ComposedCache<MemoryCacheLevel<String, String>, FakeLevel<String, String>>,
                                               FakeLevel<String, String>, Gate, Task<String, any Error>) {
        let gate = Gate()
        let db = FakeLevel<String, String>(name: "db"); db.holdSets(on: gate)
        let stack = MemoryCacheLevel<String, String>(capacity: 100) + db
        let load = Task { try await stack.get("k", ttl: .seconds(60)) { _ in "loaded" } }
        #expect(await yieldUntil { gate.waiting == 1 }, "the landing never reached the lower level")
        return (stack, db, gate, load)
    }

    @Test func aRemoveThroughTheStackDuringTheLandingIsNotHiddenByIt() async throws {
        let (stack, db, gate, load) = try await Self.landingHeld()
        let joiner = Task { try await stack.get("k", ttl: .seconds(60)) { _ in "second load" } }
        let remove = Task { try await stack.remove("k") }
        db.holdSets(on: nil)
        gate.open()
        try await remove.value
        #expect(try await load.value == "loaded")
        #expect(["loaded", "second load"].contains(try await joiner.value))
        // Begun after the remove returned: the loaded value is gone.
        #expect(try await stack.get("k", ttl: .seconds(60)) { _ in "after remove" } == "after remove")
    }

    /// Many rounds, unheld: a remove through the stack and a get begun after it
    /// returned, while other callers load and join.
    @Test func stressGetsAfterARemoveNeverAnswerTheRemovedLoad() async throws {
        let db = FakeLevel<String, String>(name: "db")
        let stack = MemoryCacheLevel<String, String>(capacity: 100) + db
        for round in 0..<300 {
            let old = "old \(round)", new = "new \(round)"
            let loads = (0..<4).map { _ in Task { try await stack.get("k", ttl: .seconds(60)) { _ in old } } }
            await Task.yield()
            try await stack.remove("k")
            let answer = try await stack.get("k", ttl: .seconds(60)) { _ in new }
            #expect(answer == new, "round \(round): a get begun after the remove answered \(answer)")
            for task in loads { _ = try await task.value }
            try await stack.remove("k")
        }
    }
}
