extension MemoryCacheLevel {
    /// Hits answered under the shard lock, without suspending; compiled for
    /// the concrete `Key` and `Value` where it is asked for (in
    /// ``CacheLevel/normalize()`` on a level whose type is known).
    @inlinable
    public var synchronousRead: SynchronousRead<Key, Value>? {
        SynchronousRead(value: { [self] key in value(forKey: key) }, entry: { [self] key in storedEntry(forKey: key) })
    }
}
