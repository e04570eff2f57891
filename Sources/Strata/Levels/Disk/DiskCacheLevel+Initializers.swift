import Foundation

extension DiskCacheLevel where Key: CacheKeyConvertible {
    /// A disk level with an explicit codec.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int, codec: CacheCodec<Value>,
        defaultTTL: Duration? = nil, policy: EvictionPolicy = .adaptive, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: codec,
                      defaultTTL: defaultTTL, policy: policy, clock: clock, keyBytes: { $0.cacheKeyBytes })
    }
}

extension DiskCacheLevel where Key: CacheKeyConvertible, Value == Data {
    /// Raw `Data` values, stored as they are.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int,
        defaultTTL: Duration? = nil, policy: EvictionPolicy = .adaptive, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: .data,
                      defaultTTL: defaultTTL, policy: policy, clock: clock)
    }
}

extension DiskCacheLevel where Key: CacheKeyConvertible, Value == String {
    /// UTF-8 `String` values.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int,
        defaultTTL: Duration? = nil, policy: EvictionPolicy = .adaptive, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: .string,
                      defaultTTL: defaultTTL, policy: policy, clock: clock)
    }
}

extension DiskCacheLevel where Key: CacheKeyConvertible, Value: Codable {
    /// `Codable` values as JSON.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int,
        defaultTTL: Duration? = nil, policy: EvictionPolicy = .adaptive, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: .json(),
                      defaultTTL: defaultTTL, policy: policy, clock: clock)
    }
}
