/// How a ``MemoryCacheLevel`` or a ``DiskCacheLevel`` chooses what to evict.
public enum EvictionPolicy: String, Sendable, Hashable, CaseIterable {
    /// Exact least-recently-used order across the level; every set is kept.
    case lru
    /// W-TinyLFU with an adaptive admission window: new entries pass through
    /// a small LRU window, then must have been requested more often than the
    /// entry they would displace to enter the main (segmented LRU) region.
    /// The window's share adapts to the workload (ghost hits, as in ARC). A `set`
    /// can be declined (it still succeeds; a later get misses), counted in
    /// ``MemoryCacheLevel/admissionsRejected`` (``DiskCacheLevel/admissionsRejected``).
    /// The default, for memory and disk levels.
    case adaptive
}
