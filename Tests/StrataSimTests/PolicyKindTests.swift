@testable import StrataSim
import Testing

@Suite struct PolicyKindTests {
    @Test func parsesAList() throws {
        #expect(try PolicyKind.parse("lru,optimal").map(\.name) == ["lru", "optimal"])
        #expect(try PolicyKind.parse(" Optimal , lru").map(\.name) == ["optimal", "lru"])
    }

    @Test func unknownNameListsTheKnownOnes() {
        #expect(throws: PolicyKind.ListError(description: "unknown policy \"arc\" (known policies: lru, tinylfu, adaptive, optimal)")) {
            try PolicyKind.parse("lru,arc")
        }
        #expect(throws: PolicyKind.ListError.self) { try PolicyKind.parse("") }
        #expect(throws: PolicyKind.ListError.self) { try PolicyKind.parse("lru,,optimal") }
        #expect(throws: PolicyKind.ListError(description: "policy \"lru\" is listed twice")) {
            try PolicyKind.parse("lru,lru")
        }
    }

    @Test func aNewPolicyPlugsIn() throws {
        /// Never caches anything.
        final class NoCache: Policy {
            let name = "none"
            func access(key: Int, size: Int) -> Bool { false }
        }
        let none = PolicyKind(name: "none", summary: "caches nothing") { _ in NoCache() }
        let kinds = try PolicyKind.parse("none,lru", known: PolicyKind.all + [none])
        let trace = Workload.loop(keys: 5, requests: 50).trace(seed: 0)
        let results = Simulator(policies: kinds, sizes: [10]).run(trace)
        #expect(results.map(\.policy) == ["none", "lru"])
        #expect(results.map(\.hits) == [0, 45])
    }
}
