import Foundation
import StrataSim
import StrataTestSupport
import Testing

/// The real `strata sim` binary: output, and one-line errors with a non-zero exit.
@Suite struct SimCommandTests {
    func strata(_ arguments: [String]) throws -> SimRun { try runStrataSim(arguments) }

    @Test func printsATable() throws {
        let trace = temporaryFile("1\n2\n1\n3\n1\n2\n")
        let result = try strata(["--sizes", "1,2", trace, "loop:3:30"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first?.split(separator: " ").map(String.init) == ["trace", "requests", "size", "lru", "adaptive", "optimal", "best", "gap"])
        // Two traces at two sizes, the legend, a blank line and the per-trace summary (a header and two rows).
        #expect(lines.count == 6 + 4, "\(result.stdout)")
        #expect(result.stderr.isEmpty)
    }

    @Test func csvAndJSON() throws {
        let csv = try strata(["--sizes", "2", "--policies", "lru", "--csv", "loop:2:10"])
        #expect(csv.stdout == "trace,requests,size,unit,policy,hits,hit_ratio\nloop:2:10,10,2,objects,lru,8,0.800000\n")
        let json = try strata(["--sizes", "2", "--json", "loop:2:10"])
        let rows = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(rows?.count == 3, "lru, adaptive and optimal by default")
    }

    @Test func badInputIsOneLine() throws {
        let malformed = temporaryFile("1\n2\nthree\n")
        let cases: [([String], String)] = [
            ([malformed], "strata: error: \(malformed):3: malformed line: expected an integer key, found \"three\"\n"),
            (["/nonexistent/x.trace"], "strata: error: /nonexistent/x.trace: no such file\n"),
            (["--policies", "lru,arc", "loop:1:1"], "strata: error: --policies: unknown policy \"arc\" (known policies: lru, tinylfu, adaptive, optimal)\n"),
            (["--sizes", "10,x", "loop:1:1"], "strata: error: --sizes: \"x\" is not a positive integer (expected a list such as 500,1000,2000)\n"),
            (["zipf:10:1"], "strata: error: workload \"zipf:10:1\": wrong number of fields (expected zipf:ITEMS:THETA:REQUESTS)\n"),
        ]
        for (arguments, message) in cases {
            let result = try strata(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderr == message)
            #expect(result.stdout.isEmpty)
        }
    }
}
