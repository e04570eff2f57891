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

extension DiskCacheLevel {
    /// Throws what ``init(name:directory:capacity:codec:defaultTTL:policy:clock:keyBytes:)``
    /// would throw for `directory` (``DiskCacheError/directoryNotWritable(path:errno:)``),
    /// without creating or writing anything: for tools that check a
    /// configuration (`strata check`). A directory that can be read but not
    /// written passes, as the level opens on it.
    public static func checkDirectory(_ directory: URL) throws {
        if let code = FileIO.checkDirectory(directory.path), !FileIO.isReadOnlyDirectory(directory.path, failure: code) {
            throw DiskCacheError.directoryNotWritable(path: directory.path, errno: code)
        }
    }
}
