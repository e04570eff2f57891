import Foundation
@testable import StrataRedis
import Testing

/// A reply of the wrong type is named in the error by its type and size and
/// a short prefix, never copied whole: before the fix, a 1M-element array
/// made one GET throw after ~4 s with a 34 MB message.
@Suite(.serialized) struct HostileReplySizeTests {
    static let elements = 200_000
    static let hugeArray = "*\(elements)\r\n" + String(repeating: ":1\r\n", count: elements)

    @Test func aHugeReplyOfTheWrongTypeMakesAShortError() async throws {
        let server = try await HostileServer { _, _ in .write([bytes(Self.hugeArray)]) }
        let level = try RedisCacheLevel<String, String>(url: server.url, prefix: "huge:", codec: .string, connections: 1,
                                                         commandTimeout: .seconds(10), invalidatesLevelsAbove: false)
        do {
            let value = try await level.getIfPresent("k")
            Issue.record("a reply of the wrong type answered \(String(describing: value))")
        } catch {
            let text = "\(error)"
            #expect(text.utf8.count < 1_000, "an error of \(text.utf8.count) bytes: \(text.prefix(200))…")
            #expect(text.contains("\(Self.elements)"), "the error does not say how large the reply was: \(text)")
        }
        await level.shutdown()
        await server.close()
    }

    @Test func describingAnyReplyIsBounded() {
        let long = String(repeating: "x", count: 100_000)
        let values: [RESPValue] = [
            .simpleString(long), .error(long), .bigNumber(long),
            .array((0..<100_000).map { .integer($0) }),
            .map((0..<50_000).map { RESPPair(key: .integer($0), value: .simpleString(long)) }),
            .array([.array([.array((0..<10_000).map { .simpleString("\($0)") })])]),
        ]
        for value in values {
            let text = "\(value)"
            #expect(text.utf8.count <= 300, "\(text.utf8.count) bytes: \(text.prefix(120))…")
        }
        #expect("\(RESPValue.integer(42))" == "42")
        #expect("\(RESPValue.array([.integer(1), .simpleString("OK")]))".contains("2 elements"))
        #expect("\(RedisError.server(long))".utf8.count <= 600)
    }
}
