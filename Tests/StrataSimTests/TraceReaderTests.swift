import Foundation
import StrataSim
import Testing

@Suite struct TraceReaderTests {
    @Test func lirsSkipsBlankAndStarLines() throws {
        let path = temporaryFile("1\n2\n\n*\n  3 \r\n1\n")
        let trace = try TraceReader().read(path: path)
        #expect(trace.keys == [1, 2, 3, 1])
        #expect(trace.sizes == nil)
    }

    @Test func gzipAndPlainGiveTheSameTrace() throws {
        let plain = temporaryFile("5\n6\n*\n5\n7\n")
        let gzipped = try gzipped(plain)
        let a = try TraceReader().read(path: plain), b = try TraceReader().read(path: gzipped)
        #expect(a.keys == [5, 6, 5, 7])
        #expect(b.keys == a.keys)
        #expect(TraceReader.displayName(gzipped) == TraceReader.displayName(plain))
    }

    @Test func sharedTraceIsGzip() throws {
        let trace = try SharedTraces.load("ps")
        #expect(trace.count == 10_448)
        #expect(trace.name == "ps")
    }

    @Test func textKeysOnePerLine() throws {
        let trace = try TraceReader().read(path: temporaryFile("/img/a.png\n/img/b.png\n\n/img/a.png\n"))
        #expect(trace.keys == [0, 1, 0])
    }

    @Test func csvWithSizes() throws {
        let trace = try TraceReader().read(path: temporaryFile("key,size\na,100\nb, 20\na,100\n", suffix: ".csv"))
        #expect(trace.keys == [0, 1, 0])
        #expect(trace.sizes == [100, 20, 100])
        // Capacity is bytes: 100 holds a (100) or b (20) but not both.
        #expect(hits(.lru, trace, size: 100) == 0)
        #expect(hits(.lru, trace, size: 120) == 1)
    }

    @Test func csvWithoutSizes() throws {
        let trace = try TraceReader(format: .csv).read(path: temporaryFile("a\nb\na\n"))
        #expect(trace.keys == [0, 1, 0])
        #expect(trace.sizes == nil)
    }

    @Test func missingEmptyAndUnreadableNameTheFile() throws {
        let missing = NSTemporaryDirectory() + "strata-sim-no-such-file.trace"
        #expect(throws: TraceError.missing(file: missing)) { try TraceReader().read(path: missing) }
        #expect(TraceError.missing(file: missing).description == "\(missing): no such file")

        let empty = temporaryFile("")
        #expect(throws: TraceError.empty(file: empty)) { try TraceReader().read(path: empty) }
        let blank = temporaryFile("\n\n*\n  \n")
        #expect(throws: TraceError.empty(file: blank)) { try TraceReader().read(path: blank) }

        let directory = NSTemporaryDirectory()
        #expect(throws: TraceError.unreadable(file: directory, reason: "it is a directory")) {
            try TraceReader().read(path: directory)
        }
    }

    @Test func malformedLinesNameFileAndLine() throws {
        let lirs = temporaryFile("1\n2\n\nabc\n4\n")
        let error = #expect(throws: TraceError.self) { try TraceReader().read(path: lirs) }
        #expect(error == .malformed(file: lirs, line: 4, reason: "expected an integer key, found \"abc\""))
        #expect(error?.description == "\(lirs):4: malformed line: expected an integer key, found \"abc\"")

        let cases: [(String, Int, String)] = [
            ("a,1\nb\n", 2, "no size, but line 1 has one (give every line a size, or none)"),
            ("a\nb,5\n", 2, "a size, but line 1 has none (give every line a size, or none)"),
            ("a,1\nb,-3\n", 2, "the size must be a positive integer, found \"-3\""),
            ("a,1\nb,0\n", 2, "the size must be a positive integer, found \"0\""),
            ("a,1,2\n", 1, "expected key[,size], found more than two fields in \"a,1,2\""),
            ("a,1\n,4\n", 2, "empty key in \",4\""),
            ("1\n99999999999999999999999\n", 2, "expected an integer key, found \"99999999999999999999999\""),
        ]
        for (text, line, reason) in cases {
            let path = temporaryFile(text)
            // "a" alone reads as a text key, so the CSV cases say --format csv.
            let format: TraceFormat = text.hasPrefix("1\n") ? .auto : .csv
            #expect(throws: TraceError.malformed(file: path, line: line, reason: reason)) {
                try TraceReader(format: format).read(path: path)
            }
        }
    }

    @Test func corruptGzipIsAnError() throws {
        let path = temporaryFile(bytes: [0x1F, 0x8B, 0x08, 0x00, 0x01, 0x02, 0x03])
        let error = #expect(throws: TraceError.self) { try TraceReader().read(path: path) }
        guard case .badGzip(let file, let reason)? = error else {
            Issue.record("expected badGzip, got \(String(describing: error))")
            return
        }
        #expect(file == path)
        #expect(!reason.isEmpty && !reason.contains("\n"))
    }

    /// Random bytes never trap the reader: each is a trace or a TraceError.
    @Test func fuzzRandomBytes() throws {
        var generator = SeededGenerator(seed: 99)
        let alphabet = Array("0123456789,*\n\r \t-+ab".utf8)
        for round in 0..<300 {
            let length = Int(generator.next() % 200)
            var bytes: [UInt8] = (0..<length).map { _ in
                round % 2 == 0 ? UInt8(truncatingIfNeeded: generator.next()) : alphabet[Int(generator.next() % UInt64(alphabet.count))]
            }
            for format in TraceFormat.allCases {
                do {
                    let trace = try TraceReader(format: format).parse(bytes, file: "fuzz")
                    #expect(!trace.keys.isEmpty)
                    _ = Simulator(policies: PolicyKind.all, sizes: [3]).run(trace)
                } catch is TraceError {
                } catch {
                    Issue.record("unexpected error \(error)")
                }
            }
            if round % 30 == 0 {  // through the file and gzip paths too
                bytes.insert(contentsOf: [0x1F, 0x8B], at: 0)
                #expect(throws: TraceError.self) { try TraceReader().read(path: temporaryFile(bytes: bytes)) }
            }
        }
    }
}
