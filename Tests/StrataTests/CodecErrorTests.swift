import Foundation
import Strata
import StrataTestSupport
import Testing

/// Disk and key-value store levels throw one codec error type (Redis too,
/// tested with a server in StrataRedisTests' codec paths).
@Suite struct CodecErrorTests {
    struct Refused: Error, CustomStringConvertible { var description: String { "refused" } }

    static let refusing = CacheCodec<String>(
        name: "picky", encode: { _ in throw Refused() }, decode: { _ in throw Refused() })

    @Test func diskEncodingFailureIsACodecError() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let disk = try DiskCacheLevel<String, String>(directory: dir.url, capacity: 1 << 20, codec: Self.refusing)
        await #expect(throws: CodecError.encodingFailed(codec: "picky", reason: "refused")) {
            try await disk.set("v", forKey: "k")
        }
    }

    @Test func keyValueStoreEncodingAndDecodingFailuresAreCodecErrors() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let store = try KeyValueStoreLevel<String, String>(name: "s", directory: dir.url, codec: Self.refusing)
        await #expect(throws: CodecError.encodingFailed(codec: "picky", reason: "refused")) {
            try await store.set("v", forKey: "k")
        }
        try await KeyValueStoreLevel<String, String>(name: "s", directory: dir.url).set("v", forKey: "k")
        let reopened = try KeyValueStoreLevel<String, String>(name: "s", directory: dir.url, codec: Self.refusing)
        await #expect(throws: CodecError.decodingFailed(codec: "picky", reason: "refused")) {
            _ = try await reopened.getIfPresent("k")
        }
    }

    @Test func theStringCodecRefusesBytesThatAreNotUTF8() {
        #expect(throws: CodecError.invalidUTF8) { try CacheCodec<String>.string.decode(Data([0xFF, 0xFE])) }
        #expect(throws: CodecError.decodingFailed(codec: "utf8", reason: "bytes are not valid UTF-8 text")) {
            try CacheCodec<String>.string.decoded(Data([0xFF, 0xFE]))
        }
    }
}
