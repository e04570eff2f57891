/// Load-through under the options: fail-safe and timeouts around the whole
/// get (levels and loader), refresh ahead of expiry on hits.
extension ResilientCache {
    /// The value for `key` from the first level of the stack that has it,
    /// else from `load`, kept `ttl` (plus up to `jitter`) in every level (see
    /// ``ComposedCache/get(_:ttl:jitter:load:)``). A hit past the refresh-ahead
    /// fraction of `ttl` starts one background load of the key; a failing or
    /// late get answers the last known value (see ``ResilientCache``). Throws
    /// (as the cause of its `FetchError`) ``ExpiryError/invalidTTL(_:)`` for a
    /// negative `ttl` and ``ResilienceError/invalidRefreshAhead(_:)`` for a
    /// refresh-ahead fraction that is not a number.
    public func get<Upper, Lower>(_ key: Key, ttl: Duration?, jitter: Duration = .zero,
                                  load: @escaping @Sendable (Key) async throws -> Value) async throws -> Value
    where Inner == ComposedCache<Upper, Lower> {
        // A hit the top level answers without suspending (as in `entry(forKey:)`):
        // no timer, no load machinery; a negative TTL or unusable options go
        // on, to be refused.
        if ttl.map({ $0 >= .zero }) ?? true, optionsUsable, let read = synchronousEntry {
            let ticket = known?.beginRead(key)
            if let entry = read(key) {
                known?.settle(entry.value, forKey: key, ticket: ticket, at: clock.now())
                refreshIfDue(entry, key, ttl: ttl, jitter: jitter, load: load)
                return entry.value
            }
        }
        let entry = try await FetchError.getting(key, in: name) {
            try ExpiryError.checked(ttl)  // bad input, not a failure to answer stale
            if let optionsFailure { throw optionsFailure }
            return try await guarded(key) { [inner, weak self] in
                let (entry, cached) = try await inner.loadEntry(key, ttl: ttl, jitter: jitter, load: load)
                if cached {
                    self?.refreshIfDue(entry, key, ttl: ttl, jitter: jitter, load: load)
                } else if let self, let loadTimes {
                    loadTimes.loaded(key, at: clock.now())
                }
                return entry
            }
        }
        guard let entry else { throw FetchError.notFound(key, in: name) }  // not reached: a loading get finds a value
        return entry.value
    }

    /// Starts a refresh of `key` if `entry` is past the refresh-ahead
    /// fraction of `ttl` and none is under way.
    private func refreshIfDue<Upper, Lower>(_ entry: CacheEntry<Value>, _ key: Key, ttl: Duration?, jitter: Duration,
                                            load: @escaping @Sendable (Key) async throws -> Value)
    where Inner == ComposedCache<Upper, Lower> {
        guard let fraction = options.refreshAhead, let ttl, let expiresAt = entry.expiresAt else { return }
        var refreshAt = expiresAt.advanced(by: .zero - ttl * (1 - fraction))
        if let loaded = loadTimes?[key] { refreshAt = max(refreshAt, loaded.advanced(by: ttl * fraction)) }
        guard clock.now() >= refreshAt, refreshing.withLock({ $0.insert(key).inserted }) else { return }
        // The get's trace notes the start; the refresh itself is no part of
        // the request (its load and writes are not in the trace).
        let trace = CacheContext.trace
        let started = CacheContext.$trace.withValue(nil) { refreshes.start(level: name, key: key) { [self] in
            defer { refreshing.withLock { _ = $0.remove(key) } }
            // A write of this cache: the last known value becomes the new one.
            let ticket = known?.beginWrite(key)
            var landed: Value?
            defer { if let ticket { known?.endWrite(landed, forKey: key, ticket: ticket, at: clock.now()) } }
            landed = try await CacheContext.writing(as: writer) {
                try await inner.refresh(key, replacing: entry.value, ttl: ttl, jitter: jitter, load: load)
            }
            if landed != nil { loadTimes?.loaded(key, at: clock.now()) }
            return landed != nil
        } }
        guard started else { return refreshing.withLock { _ = $0.remove(key) } }
        trace?.append(CacheEvent(level: name, operation: .get, outcome: .refreshStarted, key: describeKey(key),
                                 duration: .zero, isBackfill: false, error: nil))
    }
}
