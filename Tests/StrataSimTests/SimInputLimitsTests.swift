import Foundation
@testable import StrataSim
import StrataTestSupport
import Testing

/// Sizes and traces are bounded: an object size or capacity near `Int.max`
/// would overflow the policies' byte sums, and a trace is read whole into
/// memory, so its text and its requests have a ceiling too.
@Suite struct SimInputLimitsTests {
    @Test func sizesAboveTheMaximumAreAUsageError() throws {
        #expect(Trace.maxSize == 1 << 50)
        #expect(try SimulationRun.parseSizes("1_125_899_906_842_624") == [1 << 50])
        #expect(throws: SimulationRun.UsageError(description:
            "--sizes: 9223372036854775807 is over the maximum of 1125899906842624 (2^50)")) {
            try SimulationRun.parseSizes("10,9223372036854775807")
        }
    }

    @Test func csvSizesAboveTheMaximumAreMalformedLines() throws {
        let path = temporaryFile("a,100\nb,5000000000000000000\n", suffix: ".csv")
        #expect(throws: TraceError.malformed(file: path, line: 2,
                                             reason: "the size must be at most 1125899906842624 (2^50), found \"5000000000000000000\"")) {
            try TraceReader().read(path: path)
        }
        let largest = try TraceReader().parse(Array("a,1125899906842624\n".utf8), file: "x.csv")
        #expect(largest.sizes == [1 << 50])
    }

    /// Through the library API (which does not validate sizes) the clairvoyant
    /// policy still never overflows its byte count.
    @Test func optimalPolicyDoesNotOverflowWithHugeSizes() {
        let huge = 5_000_000_000_000_000_000
        let trace = Trace(name: "huge", keys: [0, 1, 0, 1], sizes: [huge, huge, huge, huge])
        let policy = OptimalPolicy(trace: trace, capacity: Int.max)
        let hits = zip(trace.keys, trace.sizes ?? []).filter { policy.access(key: $0, size: $1) }.count
        #expect(hits == 1, "only one of the two fits; the other is evicted at once")
    }

    /// At the maximum, every policy (the real memory level included) replays
    /// without overflowing.
    @Test func theMaximumSizesReplayWithoutTrapping() {
        let max = Trace.maxSize
        let trace = Trace(name: "max", keys: [0, 1, 0, 1, 2, 0], sizes: [max, max, max, max, 1, max])
        let results = Simulator(policies: PolicyKind.all, sizes: [max]).run(trace)
        #expect(results.count == PolicyKind.all.count)
        // `tinylfu` counts objects, not bytes (a reference for unsized traces).
        #expect(results.filter { $0.policy != "tinylfu" }.allSatisfy { $0.hits <= 2 })
    }

    @Test func tooManyRequestsIsAnErrorNamingFileAndLine() {
        #expect(TraceReader().maxRequests == Workload.limit)
        let reader = TraceReader(maxRequests: 3)
        #expect(throws: TraceError.tooManyRequests(file: "t", line: 5, limit: 3)) {
            try reader.parse(Array("1\n2\n\n3\n4\n".utf8), file: "t")
        }
        #expect(TraceError.tooManyRequests(file: "t", line: 5, limit: 3).description
            == "t:5: more than 3 requests (the most a trace may have)")
        #expect(throws: Never.self) { try reader.parse(Array("1\n2\n3\n\n".utf8), file: "t") }
    }

    @Test func aPlainFileOverTheByteLimitIsAnError() {
        #expect(TraceReader().maxBytes == 2 << 30)
        let path = temporaryFile(String(repeating: "1\n", count: 600))
        #expect(throws: TraceError.tooLarge(file: path, limit: 1000)) { try TraceReader(maxBytes: 1000).read(path: path) }
        #expect(TraceError.tooLarge(file: path, limit: 1000).description
            == "\(path): more than 1000 bytes of trace text (the most a trace may have)")
        #expect(throws: Never.self) { try TraceReader(maxBytes: 1200).read(path: path) }
    }

    @Test func aGzipFileThatDecompressesOverTheByteLimitIsAnError() throws {
        let plain = temporaryFile(String(repeating: "1\n", count: 1 << 20))
        let gzipped = try gzipped(plain)
        #expect(try FileManager.default.attributesOfItem(atPath: gzipped)[.size] as? Int ?? .max < 10_000)
        #expect(throws: TraceError.tooLarge(file: gzipped, limit: 100_000)) {
            try TraceReader(maxBytes: 100_000).read(path: gzipped)
        }
        #expect(try TraceReader(maxBytes: 2 << 20).read(path: gzipped).count == 1 << 20)
    }

    /// The real binary: one line on stderr, no trap.
    @Test func theCommandRefusesHugeSizesOnOneLine() throws {
        let csv = temporaryFile("a,5000000000000000000\nb,5000000000000000000\na,1\n", suffix: ".csv")
        let cases: [([String], String)] = [
            (["--sizes", "9223372036854775807", "loop:1:1"],
             "strata: error: --sizes: 9223372036854775807 is over the maximum of 1125899906842624 (2^50)\n"),
            (["--sizes", "1000", csv],
             "strata: error: \(csv):1: malformed line: the size must be at most 1125899906842624 (2^50), found \"5000000000000000000\"\n"),
        ]
        for (arguments, message) in cases {
            let run = try runStrataSim(arguments)
            #expect(run.status != 0 && run.exited, "\(arguments)")
            #expect(run.stderr == message)
            #expect(run.stdout.isEmpty)
        }
    }
}
