extension MemoryCacheLevel {
    /// This level erased to ``BasicCache``, with its hits answered without
    /// suspending: the erased get costs one plain closure call more than the
    /// concrete one. Compiled where it is called, for the concrete `Key` and
    /// `Value` (a memory level reached only generically erases through
    /// ``CacheLevel/normalize()``).
    @inlinable
    public func normalize() -> BasicCache<Key, Value> {
        BasicCache(
            name: name,
            getIfPresent: { [self] key in value(forKey: key) },
            entry: { [self] key in storedEntry(forKey: key) },
            entries: { [self] keys, maxConcurrency in await entries(forKeys: keys, maxConcurrency: maxConcurrency) },
            set: { [self] value, key in try await set(value, forKey: key) },
            setExpiring: { [self] value, key, expiresAt in try await set(value, forKey: key, expiresAt: expiresAt) },
            remove: { [self] key in try await remove(key) },
            clear: { [self] in await clear() },
            onMemoryWarning: { [self] in await onMemoryWarning() },
            waitForPendingWrites: nil,
            listen: nil,
            synchronousRead: SynchronousRead(
                value: { [self] key in value(forKey: key) },
                entry: { [self] key in storedEntry(forKey: key) }
            ),
            levelCounters: { [self] in levelCounters }
        )
    }
}
