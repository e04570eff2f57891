extension MemoryCacheLevel {
    /// Hits answered under the shard lock, without suspending; compiled for
    /// the concrete `Key` and `Value` where it is asked for (in
    /// ``CacheLevel/normalize()`` on a level whose type is known), or where
    /// the level was created when it is asked for without its types.
    @inlinable
    public var synchronousRead: SynchronousRead<Key, Value>? {
        if isSpecialised {
            return SynchronousRead(value: { [self] key in value(forKey: key) }, entry: { [self] key in storedEntry(forKey: key) })
        }
        let paths = specialised
        return SynchronousRead(value: { [self] key in paths.value(self, key) }, entry: { [self] key in paths.entry(self, key) })
    }

    @inlinable
    public func synchronousValue(forKey key: Key) -> Value? {
        isSpecialised ? value(forKey: key) : specialised.value(self, key)
    }

    /// A memory level's synchronous read is its whole read: `nil` is a miss.
    @inlinable
    public var synchronousReadIsComplete: Bool { true }
}
