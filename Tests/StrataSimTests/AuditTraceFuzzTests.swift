import Foundation
@testable import StrataSim
import StrataTestSupport
import Testing

/// Rule 2 audit of `strata sim`'s trace readers. Each test here failed when it was written.
@Suite struct AuditTraceFuzzTests {
    /// Text keys are interned as Swift `String`s, which compare by canonical
    /// equivalence: `café` written precomposed (C3 A9) and decomposed
    /// (65 CC 81) are different lines of bytes but become one key, so the
    /// replay counts hits that never happened.
    @Test func canonicallyEquivalentKeysStayDistinct() throws {
        let text: [UInt8] = Array("caf".utf8) + [0xC3, 0xA9, 0x0A] + Array("cafe".utf8) + [0xCC, 0x81, 0x0A]
        let trace = try TraceReader(format: .keys).parse(text, file: "t.txt")
        #expect(trace.keys.count == 2)
        #expect(trace.distinctKeys == 2, "two different byte strings were merged into one key")
    }

    /// Bytes that are not UTF-8 are decoded with replacement, so `a\xFF` and
    /// `a\xFE` (e.g. a Latin-1 trace) both become `a\u{FFFD}`: one key.
    @Test func invalidUTF8KeysStayDistinct() throws {
        let text: [UInt8] = [0x61, 0xFF, 0x0A, 0x61, 0xFE, 0x0A]
        let keys = try TraceReader(format: .keys).parse(text, file: "t.txt")
        #expect(keys.distinctKeys == 2, "two different byte strings were merged into one key")
        let csv = try TraceReader(format: .csv).parse([0x61, 0xFF, 0x2C, 0x35, 0x0A, 0x61, 0xFE, 0x2C, 0x35, 0x0A], file: "t.csv")
        #expect(csv.distinctKeys == 2, "two different byte strings were merged into one key")
    }
}

extension AuditTraceFuzzTests {
    /// A first CSV line whose size is not an integer (`1e30`, blank) is taken
    /// for a header and silently dropped, so a malformed trace loses its first
    /// request instead of failing with `malformed` (a later line with the same
    /// size is an error). Only a header (`key,size`) should be skipped.
    @Test func aBadSizeOnTheFirstLineIsNotSwallowedAsAHeader() throws {
        for first in ["a,1e30", "a,9223372036854775808", "a, "] {
            #expect(throws: TraceError.self, "\(first) was dropped as a header") {
                try TraceReader(format: .csv).parse(Array("\(first)\nb,5\n".utf8), file: "t.csv")
            }
        }
        let headed = try TraceReader(format: .csv).parse(Array("key,size\nb,5\n".utf8), file: "t.csv")
        #expect(headed.keys.count == 1)
    }
}
