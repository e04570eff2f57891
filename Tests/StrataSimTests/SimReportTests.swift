import StrataSim
import Testing

@Suite struct SimReportTests {
    let results = [
        SimulationResult(trace: "multi1", requests: 15_858, size: 1000, unit: "objects", policy: "lru", hits: 7642),
        SimulationResult(trace: "multi1", requests: 15_858, size: 1000, unit: "objects", policy: "optimal", hits: 9000),
        SimulationResult(trace: "web,1", requests: 4, size: 64, unit: "bytes", policy: "lru", hits: 1),
    ]

    @Test func tableIsAligned() {
        let table = SimReport(results: results).table()
        #expect(table == """
            trace   requests   size    lru  optimal  best   gap
            multi1    15,858  1,000  48.19    56.75  lru   8.56
            web,1          4   64 B  25.00        -  lru      -
            hit ratios in %; size = capacity in objects (B: in bytes, for traces with sizes); \
            best: the best policy other than optimal; gap: optimal's ratio minus best's, in points
            """)
    }

    /// Per row the most hits wins (ties name both); per trace the highest
    /// mean ratio, with each policy's mean distance to optimal.
    @Test func bestPolicyAndDistanceToOptimal() {
        func result(_ size: Int, _ policy: String, _ hits: Int) -> SimulationResult {
            SimulationResult(trace: "t", requests: 100, size: size, unit: "objects", policy: policy, hits: hits)
        }
        let results = [
            result(10, "lru", 20), result(10, "adaptive", 30), result(10, "optimal", 40),
            result(20, "lru", 50), result(20, "adaptive", 50), result(20, "optimal", 60),
        ]
        let advice = PolicyAdvice(results: results)
        #expect(advice.rows.map(\.best) == ["adaptive", "lru=adaptive"])
        #expect(advice.rows.map(\.bestGap) == [10, 10])
        #expect(advice.traces.count == 1)
        #expect(advice.traces[0].best == "adaptive")
        #expect(advice.traces[0].policies.map(\.name) == ["adaptive", "lru"])
        #expect(advice.traces[0].policies.map(\.meanGap) == [10, 15])
        let table = SimReport(results: results).table()
        #expect(table.hasSuffix("""
            per trace, mean over its sizes: hit ratio in % (points below optimal)
            trace  best                lru       adaptive
            t      adaptive  35.00 (15.00)  40.00 (10.00)
            """), "\(table)")
        // Without optimal there is no gap, and one policy alone is its own best.
        #expect(PolicyAdvice(results: [result(10, "lru", 20)]).rows.first?.bestGap == nil)
        #expect(PolicyAdvice(results: [result(10, "optimal", 20)]).rows.isEmpty)
    }

    @Test func csvQuotesAndRatios() {
        let lines = SimReport(results: results).csv().split(separator: "\n")
        #expect(lines[0] == "trace,requests,size,unit,policy,hits,hit_ratio")
        #expect(lines[1] == "multi1,15858,1000,objects,lru,7642,0.481902")
        #expect(lines[3] == "\"web,1\",4,64,bytes,lru,1,0.250000")
    }

    @Test func jsonRows() throws {
        let json = SimReport(results: results).json()
        #expect(json.contains("\"hitRatio\" : 0.481902"))
        #expect(json.contains("\"unit\" : \"bytes\""))
        #expect(json.contains("\"gapToOptimal\" : 8.563501"), "optimal ran at 1,000 for multi1")
        #expect(!json.contains("recommended"), "only with a curve")
    }
}
