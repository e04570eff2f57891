extension MemoryCacheLevel {
    /// A level holding at most `countLimit` entries, whatever their size (no
    /// `cost:` to write): for values whose size does not matter or is not known.
    public convenience init(
        name: String = "memory",
        countLimit: Int,
        policy: EvictionPolicy = .adaptive,
        defaultTTL: Duration? = nil,
        slidingExpiry: Duration? = nil,
        clock: any CacheClock = SystemClock()
    ) {
        self.init(name: name, capacity: .max, countLimit: countLimit, policy: policy,
                  defaultTTL: defaultTTL, slidingExpiry: slidingExpiry, clock: clock) { _ in 1 }
    }
}
