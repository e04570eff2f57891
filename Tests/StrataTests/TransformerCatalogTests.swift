import Foundation
import Strata
import Testing

@Suite struct TransformerCatalogTests {
    static func fixture(_ name: String) -> Data {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../StrataTestSupport/Fixtures/\(name)")
        return FileManager.default.contents(atPath: url.path) ?? Data()
    }

    @Test func stringTransformer() async throws {
        let utf8 = StringTransformer()
        #expect(try await utf8.transform(Data("héllo".utf8)) == "héllo")
        #expect(try await utf8.inverseTransform("héllo") == Data("héllo".utf8))
        await #expect(throws: TransformerError.invalidText(encoding: "\(String.Encoding.utf8)")) {
            try await utf8.transform(Data([0xFF, 0xFE, 0xFD]))
        }
        let ascii = StringTransformer(encoding: .ascii)
        await #expect(throws: TransformerError.self) { try await ascii.inverseTransform("é") }
    }

    @Test func jsonTransformer() async throws {
        let json = JSONTransformer()
        let value = try await json.transform(Data(#"{"name":"Ada","langs":["swift","c"],"age":36}"#.utf8))
        #expect(value["name"]?.string == "Ada")
        #expect(value["age"]?.number == 36)
        #expect(value["langs"]?.array?.count == 2)
        #expect(try await json.transform(Data("42".utf8)).number == 42, "fragments are allowed")
        #expect(String(decoding: try await json.inverseTransform(value), as: UTF8.self) == #"{"age":36,"langs":["swift","c"],"name":"Ada"}"#)
        await #expect(throws: (any Error).self) { try await json.transform(Data("{nope".utf8)) }
    }

    @Test func codableTransformerThroughALevel() async throws {
        struct User: Codable, Equatable, Sendable { var id: Int; var name: String }
        let memory = MemoryCacheLevel<String, Data>(capacity: 1 << 20)
        let users = memory.transformValues(CodableTransformer<User>())
        try await users.set(User(id: 7, name: "Ada"), forKey: "u7")
        #expect(memory.value(forKey: "u7") == Data(#"{"id":7,"name":"Ada"}"#.utf8))
        #expect(try await users.get("u7") == User(id: 7, name: "Ada"))
        try await memory.set(Data("garbage".utf8), forKey: "bad")
        let error = await #expect(throws: FetchError.self) { try await users.get("bad") }
        #expect(error?.failures.first?.operation == .transformValue)
    }

    @Test func formattersIgnoreTheMachineLocaleAndTimeZone() async throws {
        let dates = DateFormatTransformer()
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(try await dates.transform(date) == "2023-11-14T22:13:20Z")
        #expect(try await dates.inverseTransform("2023-11-14T22:13:20Z") == date)
        await #expect(throws: TransformerError.unparsable("yesterday")) { try await dates.inverseTransform("yesterday") }
        let custom = DateFormatTransformer(format: "yyyy-MM-dd", timeZone: TimeZone(identifier: "Asia/Tokyo")!)
        #expect(try await custom.transform(date) == "2023-11-15")

        let numbers = NumberFormatTransformer()
        #expect(try await numbers.transform(1234.5) == "1,234.5")
        #expect(try await numbers.inverseTransform("1,234.5") == 1234.5)
        await #expect(throws: TransformerError.self) { try await numbers.inverseTransform("twelve") }
        let german = NumberFormatTransformer(style: .decimal, locale: Locale(identifier: "de_DE"))
        #expect(try await german.transform(1234.5) == "1.234,5")
    }

    @Test(arguments: [
        ("tiny.png", CachedImage.Format.png, 3, 2),
        ("tiny.jpg", .jpeg, 5, 4),
        ("tiny-progressive.jpg", .jpeg, 5, 4),
        ("tiny.gif", .gif, 7, 3),
        ("tiny-lossy.webp", .webp, 9, 6),
        ("tiny-lossless.webp", .webp, 10, 7),
        ("tiny-alpha.webp", .webp, 11, 8),
    ])
    func imageHeadersGiveFormatAndSize(file: String, format: CachedImage.Format, width: Int, height: Int) async throws {
        let data = Self.fixture(file)
        #expect(!data.isEmpty)
        let image = try await ImageTransformer().transform(data)
        #expect(image.format == format && image.width == width && image.height == height)
        #expect(try await ImageTransformer().inverseTransform(image) == data)
    }

    @Test func nonImagesAreRejectedWithATypedError() async {
        await #expect(throws: ImageTransformerError.notAnImage) { try await ImageTransformer().transform(Data("<html>".utf8)) }
        await #expect(throws: ImageTransformerError.notAnImage) { try await ImageTransformer().transform(Data()) }
        let png = Self.fixture("tiny.png")
        await #expect(throws: ImageTransformerError.truncated(.png)) { try await ImageTransformer().transform(png.prefix(12)) }
        let jpeg = Self.fixture("tiny.jpg")
        await #expect(throws: (any Error).self) { try await ImageTransformer().transform(jpeg.prefix(20)) }
    }
}
