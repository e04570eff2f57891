import Foundation

/// Turns values into bytes and back for levels that store bytes (disk, Redis).
public struct CacheCodec<Value>: Sendable {
    /// A short name, written into logs and errors.
    public let name: String
    /// Turns a value into the bytes a level stores; prefer ``encoded(_:)``,
    /// which types the error.
    public let encode: @Sendable (Value) throws -> Data
    /// Turns stored bytes back into a value; prefer ``decoded(_:)``, which
    /// types the error.
    public let decode: @Sendable (Data) throws -> Value

    /// A codec named `name` (for logs and errors) from two closures, which
    /// must be inverses: `decode(encode(v))` gives back `v`.
    public init(
        name: String,
        encode: @escaping @Sendable (Value) throws -> Data,
        decode: @escaping @Sendable (Data) throws -> Value
    ) {
        self.name = name
        self.encode = encode
        self.decode = decode
    }
}

extension CacheCodec where Value == Data {
    /// Raw bytes, stored as they are.
    public static var data: CacheCodec<Data> { CacheCodec(name: "data", encode: { $0 }, decode: { $0 }) }
}

extension CacheCodec where Value == String {
    /// UTF-8 text; bytes that are not UTF-8 fail to decode.
    public static var string: CacheCodec<String> {
        CacheCodec(name: "utf8", encode: { Data($0.utf8) }, decode: { data in
            guard let text = String(data: data, encoding: .utf8) else { throw CodecError.invalidUTF8 }
            return text
        })
    }
}

extension CacheCodec where Value: Codable {
    /// JSON through `encoder` and `decoder` (configure them before: ISO-8601
    /// dates, key strategies; they are not changed here).
    public static func json(encoder: JSONEncoder = JSONEncoder(), decoder: JSONDecoder = JSONDecoder()) -> CacheCodec<Value> {
        let coding = CodableCoding<Value>(encoder: encoder, decoder: decoder)
        return CacheCodec(name: "json", encode: coding.encodeJSON, decode: coding.decodeJSON)
    }

    /// Binary property lists.
    public static func propertyList() -> CacheCodec<Value> {
        let coding = CodableCoding<Value>()
        return CacheCodec(name: "plist", encode: coding.encodePropertyList, decode: coding.decodePropertyList)
    }
}

/// A key with a stable byte form, for levels that store keys outside the
/// process (file names, Redis keys). The bytes must not depend on the process
/// (unlike `hashValue`). See `CacheKeyConvertible+Defaults.swift` for the
/// encodings given to integers, raw-value, string-convertible and `Codable` keys.
public protocol CacheKeyConvertible: Sendable {
    /// The key's bytes: equal keys give equal bytes and distinct keys distinct
    /// bytes, in every process and every run.
    var cacheKeyBytes: [UInt8] { get }
}

extension String: CacheKeyConvertible {
    /// The string's UTF-8.
    public var cacheKeyBytes: [UInt8] { Array(utf8) }
}

extension URL: CacheKeyConvertible {
    /// The UTF-8 of `absoluteString`.
    public var cacheKeyBytes: [UInt8] { Array(absoluteString.utf8) }
}

extension Int: CacheKeyConvertible {
    /// The decimal text, as UTF-8 (`42` is `"42"`).
    public var cacheKeyBytes: [UInt8] { Array(String(self).utf8) }
}

extension UUID: CacheKeyConvertible {
    /// The UTF-8 of `uuidString` (upper-case hexadecimal with dashes).
    public var cacheKeyBytes: [UInt8] { Array(uuidString.utf8) }
}

extension Data: CacheKeyConvertible {
    /// The bytes themselves.
    public var cacheKeyBytes: [UInt8] { Array(self) }
}
