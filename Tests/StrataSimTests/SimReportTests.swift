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
            trace   requests   size    lru  optimal
            multi1    15,858  1,000  48.19    56.75
            web,1          4   64 B  25.00        -
            hit ratios in %; size = capacity in objects (B: in bytes, for traces with sizes)
            """)
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
    }
}
