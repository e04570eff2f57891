@testable import StrataSim
import Testing

@Suite struct WorkloadTests {
    @Test func parsesSpecs() throws {
        #expect(try Workload(spec: "zipf:100000:0.99:1_000_000") == .zipf(items: 100_000, theta: 0.99, requests: 1_000_000))
        #expect(try Workload(spec: "loop:10:100") == .loop(keys: 10, requests: 100))
        #expect(try Workload(spec: "scan:1000:0.8:50:10000") == .scan(items: 1000, theta: 0.8, scanLength: 50, requests: 10_000))
    }

    @Test func badSpecsExplainTheForm() {
        #expect(throws: Workload.SpecError(description:
            "workload \"zipf:10:x:100\": THETA must be a number from 0 to 10, found \"x\" (expected zipf:ITEMS:THETA:REQUESTS)")) {
            try Workload(spec: "zipf:10:x:100")
        }
        for bad in ["zipf:10:1", "loop:0:10", "loop:10:-1", "scan:1:1:1", "loop:999999999999:1", "zipf::0.9:10", "uniform:1:2"] {
            #expect(throws: Workload.SpecError.self, "\(bad)") { try Workload(spec: bad) }
        }
    }

    @Test func loopCycles() {
        #expect(Workload.loop(keys: 3, requests: 7).trace(seed: 0).keys == [0, 1, 2, 0, 1, 2, 0])
    }

    @Test func scanAlternatesZipfAndFreshKeys() {
        let keys = Workload.scan(items: 100, theta: 1, scanLength: 4, requests: 18).trace(seed: 1).keys
        #expect(keys.count == 18)
        #expect(keys[0..<4].allSatisfy { $0 >= 0 })
        #expect(Array(keys[4..<8]) == [-1, -2, -3, -4])
        #expect(keys[8..<12].allSatisfy { $0 >= 0 })
        #expect(Array(keys[12..<16]) == [-5, -6, -7, -8])
        #expect(keys[16..<18].allSatisfy { $0 >= 0 })
    }
}
