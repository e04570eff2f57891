import Foundation
import StrataSim
import Testing

/// `strata sim --curve`: capacities doubling up to the working set, and the
/// smallest capacity within a point of the best ratio tried.
@Suite struct CapacityCurveTests {
    @Test func doublingSizesReachTheWorkingSet() {
        let loop = Workload.loop(keys: 1011, requests: 5_000).trace(seed: 1)
        #expect(CapacityCurve.doublingSizes(for: loop) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])
        let sized = Trace(name: "s", keys: [1, 2, 1, 3], sizes: [100, 50, 300, 20])
        #expect(CapacityCurve.workingSet(of: sized) == 370, "each object at its largest size")
        #expect(CapacityCurve.doublingSizes(for: sized, points: 3) == [128, 256, 512])
        #expect(CapacityCurve.doublingSizes(for: Trace(name: "one", keys: [7, 7])) == [1])
    }

    @Test func recommendsTheSmallestWithinThePoints() {
        func result(_ size: Int, _ hits: Int, policy: String = "adaptive") -> SimulationResult {
            SimulationResult(trace: "t", requests: 1000, size: size, unit: "objects", policy: policy, hits: hits)
        }
        let results = [result(8, 100), result(16, 500), result(32, 795), result(64, 800), result(128, 800),
                       result(8, 900, policy: "optimal")]
        let one = CapacityCurve.recommend(results, within: 1)
        #expect(one.count == 1)
        #expect(one.first.map { [$0.size, $0.bestSize] } == [32, 64])
        #expect(one.first.map { [$0.hitRatio, $0.bestHitRatio] } == [0.795, 0.8])
        #expect(one.first?.policy == "adaptive", "not optimal")
        #expect(CapacityCurve.recommend(results, within: 0).first?.size == 64, "the best, smallest on a tie")
        #expect(CapacityCurve.recommend(results, within: 40).first?.size == 16)
    }

    /// The real binary: a curve with its recommendation, and the same output
    /// from two processes (one with Swift's hashing seeded at random).
    @Test func curveFromTheCommandLineIsDeterministic() throws {
        let arguments = ["--curve", "--policies", "adaptive,optimal", "--no-progress", SharedTraces.path("ps")]
        let first = try runStrataSim(arguments)
        let second = try runStrataSim(arguments, environment: ["SWIFT_DETERMINISTIC_HASHING": "1"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == second.stdout)
        let lines = first.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("recommended capacity: the smallest tried within 1 point of the best ratio tried") })
        // ps holds 2,000-odd distinct keys: the curve runs from 2 to 4,096.
        #expect(lines.contains { $0.hasPrefix("ps") && $0.contains(" 4,096 ") })
        let recommendation = try #require(lines.last { $0.hasPrefix("ps") })
        #expect(recommendation.split(separator: " ").map(String.init).prefix(3) == ["ps", "adaptive", "2,048"], "\(first.stdout)")
        let json = try runStrataSim(["--curve", "--within", "5", "--json", "--policies", "adaptive", "loop:100:2000"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
        #expect(rows.filter { $0["recommended"] as? Bool == true }.map { $0["size"] as? Int } == [128])
        let bad = try runStrataSim(["--curve", "--within=-1", "loop:1:1"])
        #expect(bad.stderr == "strata: error: --within: -1 is not a number of points from 0 to 100\n")
    }
}
