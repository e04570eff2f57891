import Foundation
import Strata

/// A key that can be rebuilt from its ``CacheKeyConvertible/cacheKeyBytes``,
/// so that a ``RedisCacheLevel`` can name the key of an invalidation it hears
/// from Redis. `String`, `Int`, `UUID`, `URL` and `Data` conform; for a key
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
