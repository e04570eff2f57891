import Foundation
import Strata
import Testing

/// Every error type of the library prints words that say what went wrong
/// (#32): never Swift's dump of the case (`valueTooLarge(cost: 512, capacity: 100)`).
@Suite struct ErrorDescriptionTests {
    static let errors: [any Error] = [
        FetchError.valueNotInCache, FetchError.conditionNotSatisfied,
        FetchError(.valueNotInCache, level: "memory + disk", key: "user:7"),
        FetchError(.levelsFailed, level: "memory + disk", key: "user:7",
                   failures: [LevelFailure(level: "disk", operation: .get, key: "user:7", underlying: CodecError.invalidUTF8)]),
        BatchError.countMismatch(values: 2, keys: 3),
        MemoryCacheError.valueTooLarge(cost: 512, capacity: 100), MemoryCacheError.negativeCost(cost: -1),
        ImageTransformerError.notAnImage, ImageTransformerError.truncated(.png),
        BackfillDeclined(),
        ExpiryError.invalidTTL("-5s"),
        ResilienceError.invalidRefreshAhead("nan"),
        DiskCacheError.directoryNotWritable(path: "/x", errno: 13), DiskCacheError.writeFailed(path: "/x", errno: 28),
        DiskCacheError.readFailed(path: "/x", errno: 5), DiskCacheError.valueTooLarge(size: 9, capacity: 1),
        DiskCacheError.shutDown(path: "/x"),
        TransformerError.invalidText(encoding: "utf8"), TransformerError.unencodableText(encoding: "ascii"),
        TransformerError.unparsable("x"), TransformerError.unformattable("y"),
        CodecError.invalidUTF8, CodecError.encodingFailed(codec: "json", reason: "r"),
        CodecError.decodingFailed(codec: "json", reason: "r"),
        NetworkFetcherError.status(code: 500, body: Data(), url: URL(string: "http://h/k")),
        NetworkFetcherError.notHTTP(url: nil), NetworkFetcherError.transport(url: nil, code: 7, message: "refused"),
        NetworkFetcherError.tooLarge(url: nil, limit: 10),
        LevelFailure(level: "L2", operation: .get, key: "user:7", underlying: CodecError.invalidUTF8),
        LevelsFailedError(operation: .set, failures: [LevelFailure(level: "L2", operation: .set, key: "k", underlying: BackfillDeclined())]),
    ]

    @Test(arguments: errors.indices)
    func printsWords(index: Int) {
        let error = Self.errors[index]
        let text = String(describing: error)
        let caseName = String(describing: Mirror(reflecting: error).children.first?.label ?? "\u{0}")
        #expect(text.contains(" "), "\(type(of: error)) prints \(text)")
        #expect(!text.hasPrefix(caseName + "("), "\(type(of: error)) prints Swift's dump: \(text)")
        #expect(!text.contains("Strata."), "\(type(of: error)) prints a type name: \(text)")
    }

    /// The figures users need are in the words.
    @Test func theFiguresAreNamed() {
        #expect(String(describing: MemoryCacheError.valueTooLarge(cost: 512, capacity: 100)).contains("512"))
        #expect(String(describing: MemoryCacheError.valueTooLarge(cost: 512, capacity: 100)).contains("100"))
        #expect(String(describing: BatchError.countMismatch(values: 2, keys: 3)) == "a batch set got 2 values for 3 keys")
        #expect(String(describing: FetchError.valueNotInCache) == "no level had a value for the key")
    }
}
