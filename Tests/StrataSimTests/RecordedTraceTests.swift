import Foundation
@testable import StrataSim
import StrataTestSupport
import Testing

/// The strata trace format (`#strata-trace 1`, docs/traces.md): its lines,
/// its escaping, its errors, a fuzzer, and `strata sim` reading it.
@Suite struct RecordedTraceTests {
    static func parse(_ text: String, file: String = "t.trace") throws(TraceError) -> [RecordedRequest] {
        try RecordedTrace.parse(Array(text.utf8), file: file)
    }

    @Test func readsEveryOperation() throws {
        let requests = try Self.parse("""
        #strata-trace 1
        # a comment, then a blank line

        0 get user:7
        12.25 set user:7 512
        12.250\trm  user%207
        41.5 clear L1
        42.001 clear\r
        """)
        #expect(requests == [
            RecordedRequest(offsetMicroseconds: 0, .get(key: "user:7")),
            RecordedRequest(offsetMicroseconds: 12_250, .set(key: "user:7", valueSize: 512)),
            RecordedRequest(offsetMicroseconds: 12_250, .remove(key: "user 7")),
            RecordedRequest(offsetMicroseconds: 41_500, .clear(level: "L1")),
            RecordedRequest(offsetMicroseconds: 42_001, .clear(level: nil)),
        ])
    }

    @Test func writesWhatItReads() throws {
        let requests = [
            RecordedRequest(offsetMicroseconds: 0, .get(key: "a")),
            RecordedRequest(offsetMicroseconds: 1_005, .set(key: "100% sure", valueSize: 0)),
            RecordedRequest(offsetMicroseconds: 2_000_001, .remove(key: "tab\there\nnew\u{85}line\u{2028}é")),
            RecordedRequest(offsetMicroseconds: 2_000_001, .clear(level: nil)),
        ]
        let lines = requests.map(RecordedTrace.line)
        #expect(lines == ["0.000 get a", "1.005 set 100%25%20sure 0",
                          "2000.001 rm tab%09here%0Anew%C2%85line%E2%80%A8é", "2000.001 clear"])
        #expect(try Self.parse(([RecordedTrace.header] + lines).joined(separator: "\n")) == requests)
    }

    /// Each bad line is a ``TraceError/malformed(file:line:reason:)`` naming the file and the line.
    @Test func badLinesNameFileAndLine() {
        let cases: [(String, Int, String)] = [
            ("0 get a\n", 1, "expected the header \"#strata-trace 1\", found \"0 get a\""),
            ("#strata-trace 2\n", 1, "trace format version 2 is newer than this strata reads (1)"),
            ("#strata-trace x\n", 1, "the header's version must be a whole number, found \"x\""),
            ("#strata-trace 1\n0 get a\nsoon get b\n", 3, "OFFSET must be milliseconds such as 12 or 12.250, found \"soon\""),
            ("#strata-trace 1\n1.2345 get b\n", 2, "OFFSET must be milliseconds such as 12 or 12.250, found \"1.2345\""),
            ("#strata-trace 1\n-1 get b\n", 2, "OFFSET must be milliseconds such as 12 or 12.250, found \"-1\""),
            ("#strata-trace 1\n5 get a\n4 get b\n", 3, "offset \"4\" is before the previous request's (offsets never go back)"),
            ("#strata-trace 1\n0 put a\n", 2, "unknown operation \"put\" (get, set, rm or clear)"),
            ("#strata-trace 1\n0 get\n", 2, "get takes a KEY, found 0 fields after it"),
            ("#strata-trace 1\n0\n", 2, "expected OFFSET OPERATION [KEY] [SIZE], found \"0\""),
            ("#strata-trace 1\n0 get a b\n", 2, "get takes a KEY, found 2 fields after it"),
            ("#strata-trace 1\n0 set a\n", 2, "set takes a KEY and a VALUE-SIZE, found 1 field after it"),
            ("#strata-trace 1\n0 set a -3\n", 2, "VALUE-SIZE must be a number of bytes from 0 to 67108864, found \"-3\""),
            ("#strata-trace 1\n0 set a 67108865\n", 2, "VALUE-SIZE must be a number of bytes from 0 to 67108864, found \"67108865\""),
            ("#strata-trace 1\n0 get a%2\n", 2, "a % not followed by two hex digits (write % itself as %25) in \"a%2\""),
            ("#strata-trace 1\n0 get a%zz\n", 2, "a % not followed by two hex digits (write % itself as %25) in \"a%zz\""),
            ("#strata-trace 1\n0 get %FF\n", 2, "the key's bytes, unescaped, are not UTF-8 in \"%FF\""),
            ("#strata-trace 1\n0 get a\u{1}b\n", 2, "a control byte in the key (write it as %XX) in \"a\\u{01}b\""),
            ("#strata-trace 1\n0 clear L1 L2\n", 2, "clear takes at most one LEVEL, found 2 fields after it"),
        ]
        for (text, line, reason) in cases {
            #expect(throws: TraceError.malformed(file: "bad.trace", line: line, reason: reason), "\(text)") {
                try Self.parse(text, file: "bad.trace")
            }
        }
        #expect(throws: TraceError.empty(file: "e.trace")) { try Self.parse("", file: "e.trace") }
        #expect((try? Self.parse("#strata-trace 1\n"))?.isEmpty == true, "a recording stopped at once holds no requests")
    }

    @Test func readsFilesPlainOrGzipAndNamesMissingOnes() throws {
        let path = temporaryFile("#strata-trace 1\n0 get a\n1 get b\n")
        #expect(try RecordedTrace.read(path: path).count == 2)
        #expect(try RecordedTrace.read(path: try gzipped(path)).count == 2)
        #expect(throws: TraceError.missing(file: "/nonexistent/t.trace")) { try RecordedTrace.read(path: "/nonexistent/t.trace") }
    }

    /// Random bytes, and mutations of a good trace, either parse or throw a
    /// `TraceError` naming a line of the input; nothing traps. Random requests
    /// (keys of any scalars: spaces, controls, `%`) read back as written.
    /// Longer: `STRATA_FUZZ_ITERATIONS=1000000 swift test --filter RecordedTraceTests`.
    @Test func fuzz() throws {
        let environment = ProcessInfo.processInfo.environment
        let iterations = environment["STRATA_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 20_000
        var random = StrataSim.SeededGenerator(seed: environment["STRATA_FUZZ_SEED"].flatMap(UInt64.init) ?? 35)
        let alphabet = Array("#strata-trace 1\n0123456789. getsrmclear%AFaf\t\r\u{0}é".utf8) + [0xFF, 0xC3]
        var parsed = 0
        for _ in 0..<iterations {
            var bytes = Array((RecordedTrace.header + "\n").utf8)
            for _ in 0..<Int.random(in: 0..<60, using: &random) {
                bytes.append(alphabet.randomElement(using: &random)!)
            }
            let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).count
            do {
                _ = try RecordedTrace.parse(bytes, file: "f")
                parsed += 1
            } catch {
                switch error {
                case .malformed(let file, let line, _): #expect(file == "f" && (1...lines).contains(line))
                default: Issue.record("unexpected \(error)")
                }
            }
        }
        #expect(parsed > 0, "some random traces parse")

        for _ in 0..<iterations / 10 {
            var offset = 0
            let requests = (0..<Int.random(in: 1...8, using: &random)).map { _ -> RecordedRequest in
                offset += Int.random(in: 0...5_000, using: &random)
                let key = String(String.UnicodeScalarView((0..<Int.random(in: 1...6, using: &random)).map { _ in
                    Self.someScalar(using: &random)
                }))
                let operations: [RecordedRequest.Operation] = [
                    .get(key: key), .set(key: key, valueSize: Int.random(in: 0...RecordedTrace.maxValueSize, using: &random)),
                    .remove(key: key), .clear(level: key), .clear(level: nil),
                ]
                return RecordedRequest(offsetMicroseconds: offset, operations.randomElement(using: &random)!)
            }
            let text = ([RecordedTrace.header] + requests.map(RecordedTrace.line)).joined(separator: "\n")
            #expect(try RecordedTrace.parse(Array(text.utf8), file: "r") == requests)
        }
    }

    static func someScalar(using random: inout StrataSim.SeededGenerator) -> Unicode.Scalar {
        let pools: [ClosedRange<UInt32>] = [0...0x7F, 0x80...0x9F, 0xA0...0x2FFF, 0x1F600...0x1F64F]
        let pool = pools.randomElement(using: &random)!
        return Unicode.Scalar(UInt32.random(in: pool, using: &random)) ?? "x"
    }

    /// `strata sim` reads the format by its header: gets and sets are requests, removes and clears are not.
    @Test func simReadsTheFormat() throws {
        let text = "#strata-trace 1\n0 get a\n1 set b 10\n2 rm a\n3 get a\n4 clear\n5 get b%20c\n"
        let trace = try TraceReader().parse(Array(text.utf8), file: "t.trace")
        #expect(trace.keys == [0, 1, 0, 2])
        #expect(try TraceReader(format: .strata).parse(Array(text.utf8), file: "t").count == 4)
        #expect(throws: TraceError.malformed(file: "t", line: 1, reason: "expected the header \"#strata-trace 1\", found \"1\"")) {
            try TraceReader(format: .strata).parse(Array("1\n2\n".utf8), file: "t")
        }
        let path = temporaryFile(text)
        let result = try runStrataSim(["--sizes", "2", "--policies", "lru", "--csv", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(",4,2,objects,lru,1,"), "\(result.stdout)")
        let bad = temporaryFile("#strata-trace 1\n0 get a\n1 fetch a\n")
        let failed = try runStrataSim([bad])
        #expect(failed.status == 1)
        #expect(failed.stderr == "strata: error: \(bad):3: malformed line: unknown operation \"fetch\" (get, set, rm or clear)\n")
    }
}
