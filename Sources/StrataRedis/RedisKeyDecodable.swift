import Foundation
import Strata

/// A key that can be rebuilt from its `cacheKeyBytes` (`CacheKeyConvertible`),
/// so that a ``RedisCacheLevel`` can name the key of an invalidation it hears
/// from Redis. `String`, the integers, `UUID`, `URL` and `Data` conform, and a
/// raw-value, string-convertible or `Codable` key conforms in one line; for a key
/// type that does not, every invalidation of the level clears the levels above
/// (correct, but coarse).
public protocol RedisKeyDecodable: CacheKeyConvertible {
    /// The key whose `cacheKeyBytes` are `bytes`, or `nil` if there is none.
    init?(cacheKeyBytes bytes: [UInt8])
}

extension String: RedisKeyDecodable {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        self = text
    }
}

extension Int: RedisKeyDecodable {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let value = Int(String(decoding: bytes, as: UTF8.self)), value.cacheKeyBytes == bytes else { return nil }
        self = value
    }
}

extension UUID: RedisKeyDecodable {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let value = UUID(uuidString: String(decoding: bytes, as: UTF8.self)), value.cacheKeyBytes == bytes else { return nil }
        self = value
    }
}

extension URL: RedisKeyDecodable {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let value = URL(string: String(decoding: bytes, as: UTF8.self)), value.cacheKeyBytes == bytes else { return nil }
        self = value
    }
}

extension Data: RedisKeyDecodable {
    public init?(cacheKeyBytes bytes: [UInt8]) { self = Data(bytes) }
}

// Decoding for the byte forms of `CacheKeyConvertible+Defaults.swift`: one
// line makes a key type decodable (`extension Role: RedisKeyDecodable {}`),
// and a key is rebuilt only if it gives back the very bytes heard.

extension Int8: RedisKeyDecodable {}
extension Int16: RedisKeyDecodable {}
extension Int32: RedisKeyDecodable {}
extension Int64: RedisKeyDecodable {}
extension UInt: RedisKeyDecodable {}
extension UInt8: RedisKeyDecodable {}
extension UInt16: RedisKeyDecodable {}
extension UInt32: RedisKeyDecodable {}
extension UInt64: RedisKeyDecodable {}

extension RedisKeyDecodable {
    /// `key` if it has exactly these bytes (a key that would store under
    /// other bytes is not the one heard).
    static func exactly(_ key: Self?, _ bytes: [UInt8]) -> Self? {
        guard let key, key.cacheKeyBytes == bytes else { return nil }
        return key
    }
}

extension RedisKeyDecodable where Self: LosslessStringConvertible {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let key = Self.exactly(String(validating: bytes, as: UTF8.self).flatMap(Self.init), bytes) else { return nil }
        self = key
    }
}

extension RedisKeyDecodable where Self: RawRepresentable, RawValue: RedisKeyDecodable {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let key = Self.exactly(RawValue(cacheKeyBytes: bytes).flatMap(Self.init(rawValue:)), bytes) else { return nil }
        self = key
    }
}

extension RedisKeyDecodable where Self: RawRepresentable & LosslessStringConvertible, RawValue: RedisKeyDecodable {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let key = Self.exactly(RawValue(cacheKeyBytes: bytes).flatMap(Self.init(rawValue:)), bytes) else { return nil }
        self = key
    }
}

extension RedisKeyDecodable where Self: Codable {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let key = Self.exactly(CodableKeyEncoding.key(Self.self, from: bytes), bytes) else { return nil }
        self = key
    }
}

extension RedisKeyDecodable where Self: RawRepresentable & Codable, RawValue: RedisKeyDecodable {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let key = Self.exactly(RawValue(cacheKeyBytes: bytes).flatMap(Self.init(rawValue:)), bytes) else { return nil }
        self = key
    }
}

extension RedisKeyDecodable where Self: LosslessStringConvertible & Codable {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let key = Self.exactly(String(validating: bytes, as: UTF8.self).flatMap(Self.init), bytes) else { return nil }
        self = key
    }
}

extension RedisKeyDecodable where Self: RawRepresentable & LosslessStringConvertible & Codable, RawValue: RedisKeyDecodable {
    public init?(cacheKeyBytes bytes: [UInt8]) {
        guard let key = Self.exactly(RawValue(cacheKeyBytes: bytes).flatMap(Self.init(rawValue:)), bytes) else { return nil }
        self = key
    }
}
