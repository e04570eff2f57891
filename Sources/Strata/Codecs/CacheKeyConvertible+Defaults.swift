import Foundation

// Stable byte forms for the keys users bring, so that one line declares a
// key type: `extension Role: CacheKeyConvertible {}`.
//
// - integers (every width, signed or not): their decimal text, as `Int`;
// - `RawRepresentable` with a convertible raw value: the raw value's bytes
//   (an enum with `String` raw values stores as its raw strings);
// - `LosslessStringConvertible`: the UTF-8 of `description`;
// - `Codable`: JSON with sorted keys (ISO-8601 dates, base-64 data), so two
//   processes, or two runs, name a struct key alike.
// A type that is several of these takes the first that applies, in this order.

extension Int8: CacheKeyConvertible {}
extension Int16: CacheKeyConvertible {}
extension Int32: CacheKeyConvertible {}
extension Int64: CacheKeyConvertible {}
extension UInt: CacheKeyConvertible {}
extension UInt8: CacheKeyConvertible {}
extension UInt16: CacheKeyConvertible {}
extension UInt32: CacheKeyConvertible {}
extension UInt64: CacheKeyConvertible {}

extension CacheKeyConvertible where Self: LosslessStringConvertible {
    /// The UTF-8 of `description`.
    public var cacheKeyBytes: [UInt8] { Array(description.utf8) }
}

extension CacheKeyConvertible where Self: RawRepresentable, RawValue: CacheKeyConvertible {
    /// The raw value's bytes.
    public var cacheKeyBytes: [UInt8] { rawValue.cacheKeyBytes }
}

extension CacheKeyConvertible where Self: RawRepresentable & LosslessStringConvertible, RawValue: CacheKeyConvertible {
    /// The raw value's bytes (the raw value wins over `description`).
    public var cacheKeyBytes: [UInt8] { rawValue.cacheKeyBytes }
}

extension CacheKeyConvertible where Self: Encodable {
    /// The key's JSON with sorted keys, ISO-8601 dates and base-64 data.
    public var cacheKeyBytes: [UInt8] { CodableKeyEncoding.bytes(of: self) }
}

extension CacheKeyConvertible where Self: RawRepresentable & Encodable, RawValue: CacheKeyConvertible {
    /// The raw value's bytes (the raw value wins over JSON).
    public var cacheKeyBytes: [UInt8] { rawValue.cacheKeyBytes }
}

extension CacheKeyConvertible where Self: LosslessStringConvertible & Encodable {
    /// The UTF-8 of `description` (the description wins over JSON).
    public var cacheKeyBytes: [UInt8] { Array(description.utf8) }
}

extension CacheKeyConvertible where Self: RawRepresentable & LosslessStringConvertible & Encodable, RawValue: CacheKeyConvertible {
    /// The raw value's bytes (the raw value wins over `description` and JSON).
    public var cacheKeyBytes: [UInt8] { rawValue.cacheKeyBytes }
}

/// The JSON form of `Codable` keys (``CacheKeyConvertible``) and its inverse.
public enum CodableKeyEncoding {
    /// Sorted keys, ISO-8601 dates, base-64 data, no escaped slashes.
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.dataEncodingStrategy = .base64
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        decoder.dataDecodingStrategy = .base64
        return decoder
    }

    /// `key`'s JSON; a key JSON cannot hold (a non-finite number) is named
    /// by its description after a NUL byte, which no JSON text starts with.
    static func bytes(of key: some Encodable) -> [UInt8] {
        if let json = try? encoder().encode(key) { return Array(json) }
        return [0] + Array(String(reflecting: key).utf8)
    }

    /// The key whose JSON is `bytes`, if it is one.
    public static func key<Key: Decodable>(_ type: Key.Type, from bytes: [UInt8]) -> Key? {
        try? decoder().decode(Key.self, from: Data(bytes))
    }
}
