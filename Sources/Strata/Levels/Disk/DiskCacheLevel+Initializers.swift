import Foundation

extension DiskCacheLevel where Key: CacheKeyConvertible {
    /// A disk level with an explicit codec.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int, codec: CacheCodec<Value>,
        defaultTTL: Duration? = nil, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: codec,
                      defaultTTL: defaultTTL, clock: clock, keyBytes: { $0.cacheKeyBytes })
    }
}

extension DiskCacheLevel where Key: CacheKeyConvertible, Value == Data {
    /// Raw `Data` values, stored as they are.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int,
        defaultTTL: Duration? = nil, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: .data,
                      defaultTTL: defaultTTL, clock: clock)
    }
}

extension DiskCacheLevel where Key: CacheKeyConvertible, Value == String {
    /// UTF-8 `String` values.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int,
        defaultTTL: Duration? = nil, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: .string,
                      defaultTTL: defaultTTL, clock: clock)
    }
}

extension DiskCacheLevel where Key: CacheKeyConvertible, Value: Codable {
    /// `Codable` values as JSON.
    public convenience init(
        name: String = "disk", directory: URL? = nil, capacity: Int,
        defaultTTL: Duration? = nil, clock: any CacheClock = SystemClock()
    ) throws {
        try self.init(name: name, directory: directory, capacity: capacity, codec: .json(),
                      defaultTTL: defaultTTL, clock: clock)
    }
}
