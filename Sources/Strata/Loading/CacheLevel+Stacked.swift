extension CacheLevel {
    /// This level as a stack of its own, for load-through on a single level:
    /// `memory.stacked().get(key, ttl:) { … }` calls the loader once per key
    /// for all the callers in flight and stores its answer here with its TTL
    /// (``ComposedCache/get(_:ttl:jitter:load:)``, ``ComposedCache/get(_:load:)``,
    /// ``ComposedCache/getAll(_:ttl:jitter:load:)``).
    ///
    /// Build it once, hold it, and write through it: its sets, removes and
    /// clears are ordered against its loads (one that comes while a loader
    /// runs is never undone by that load's answer), as in any stack; writes
    /// made to the level itself are not.
    public func stacked() -> ComposedCache<Self, BasicFetcher<Key, Value>> {
        self + BasicFetcher(name: "none", getIfPresent: { _ in nil })
    }
}
