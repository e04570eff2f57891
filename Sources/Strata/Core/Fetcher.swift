/// A read-only level, typically the origin at the bottom of a pipeline.
///
/// `set`, `remove`, `clear` and `onMemoryWarning` are successful no-ops, so a
/// fetcher composes under caching levels without special cases.
public protocol Fetcher<Key, Value>: CacheLevel {}

extension Fetcher {
    public func set(_ value: Value, forKey key: Key) async throws {}
    public func remove(_ key: Key) async throws {}
    public func clear() async {}
    public func onMemoryWarning() async {}
}
