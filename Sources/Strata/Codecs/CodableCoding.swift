import Foundation

/// JSON and property-list coding of `T` for ``CacheCodec``'s `json()` and
/// `propertyList()`. The codecs hold its methods instead of closures that
/// would capture `T.self`, a metatype that is not `Sendable`.
struct CodableCoding<T: Codable>: Sendable {
    var encoder = JSONEncoder()
    var decoder = JSONDecoder()

    @Sendable func encodeJSON(_ value: T) throws -> Data { try encoder.encode(value) }
    @Sendable func decodeJSON(_ data: Data) throws -> T { try decoder.decode(T.self, from: data) }

    @Sendable func encodePropertyList(_ value: T) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try encoder.encode(value)
    }

    @Sendable func decodePropertyList(_ data: Data) throws -> T { try PropertyListDecoder().decode(T.self, from: data) }
}
