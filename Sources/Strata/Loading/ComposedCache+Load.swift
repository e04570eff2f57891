import Synchronization
/// Load-through on a stack: FusionCache's `GetOrSet`.
///
/// A get that misses every level asks the loader, once per key across the
/// callers in flight on this stack (single flight, as for its reads below),
/// and stores the answer in every level with its TTL before returning it.
/// The answer lands as a back-fill ordered by the stack: it replaces nothing
/// a shared store holds (``Backfill``) and is dropped if a set, remove or
/// clear through the stack, or a change reported from below, touched the key
/// since the load began (the caller still gets it: the load overlapped that
/// write). A level that fails to answer is passed over: the loader answers.
extension ComposedCache {
    /// The value for `key` from the first level that has it, else from
    /// `load`, kept `ttl` (`nil`: the levels' own TTLs) in every level; with
    /// `jitter`, up to that much longer, at random, so that keys loaded
    /// together do not all expire (and reload) together.
    @inlinable
    public func get(_ key: Key, ttl: Duration?, jitter: Duration = .zero,
                    load: @escaping @Sendable (Key) async throws -> Value) async throws -> Value {
        // A hit the top level answers without suspending is the answer (no
        // load machinery); a negative TTL goes on, to be refused as bad input.
        if ttl.map({ $0 >= .zero }) ?? true, let value = upper.synchronousValue(forKey: key) { return value }
        return try await loadingGet(key, ttl: ttl, jitter: jitter, load: load)
    }

    /// ``get(_:ttl:jitter:load:)`` past the top level's synchronous read.
    @usableFromInline
    func loadingGet(_ key: Key, ttl: Duration?, jitter: Duration,
                    load: @escaping @Sendable (Key) async throws -> Value) async throws -> Value {
        try await FetchError.getting(key, in: name) { try await loadEntry(key, ttl: ttl, jitter: jitter, load: load).entry.value }
    }

    /// ``get(_:ttl:jitter:load:)``'s entry, and whether a level had it.
    package func loadEntry(_ key: Key, ttl: Duration?, jitter: Duration,
                           load: @escaping @Sendable (Key) async throws -> Value) async throws -> (entry: CacheEntry<Value>, cached: Bool) {
        try ExpiryError.checked(ttl)
        let loaded: @Sendable (Key) async throws -> Loaded<Value> = { key in .value(try await load(key), ttl: Self.jittered(ttl, jitter)) }
        // This loader always finds a value: a miss remembered by another is not its answer.
        let (entry, cached) = try await loadThrough(key, loaded, consultingNotFound: false)
        if let entry { return (entry, cached) }
        // It joined a load whose loader found nothing: load once more, alone.
        if let entry = try await loadAlone(key, loaded, flightKey: ReadFlights<Value>.flightKey(key), endedBefore: nil).entry {
            return (entry, false)
        }
        return (CacheEntry(value: try await load(key)), false)  // not reached: `loaded` always finds one
    }

    /// The value for `key` from the first level that has it, else what
    /// `load` finds: a value kept for its TTL in every level, or nothing
    /// (`nil`), remembered for its TTL so that the loader is not asked again
    /// meanwhile (in this process; a write of the key through the stack or
    /// reported from below forgets it).
    @inlinable
    public func get(_ key: Key, load: @escaping @Sendable (Key) async throws -> Loaded<Value>) async throws -> Value? {
        if let value = upper.synchronousValue(forKey: key) { return value }
        return try await loadingGet(key, load: load)
    }

    /// ``get(_:load:)`` past the top level's synchronous read.
    @usableFromInline
    func loadingGet(_ key: Key, load: @escaping @Sendable (Key) async throws -> Loaded<Value>) async throws -> Value? {
        try await FetchError.getting(key, in: name) { try await loadThrough(key, load, consultingNotFound: true).entry?.value }
    }

    /// The entry for `key` from the levels (`cached`) or from `load`.
    private func loadThrough(_ key: Key, _ load: @escaping @Sendable (Key) async throws -> Loaded<Value>,
                             consultingNotFound: Bool) async throws -> (entry: CacheEntry<Value>?, cached: Bool) {
        let endedBefore = order.ended.load(ordering: .acquiring)
        do {
            if let entry = try await entry(forKey: key) { return (entry, true) }
        } catch {
            try Self.rethrowIfCancelled(error)
        }
        guard let flightKey = ReadFlights<Value>.flightKey(key) else {
            return (try await loadAlone(key, load, flightKey: nil, endedBefore: endedBefore).entry, false)
        }
        if consultingNotFound && stack.notFound.isNotFound(flightKey, now: stack.clock.now(), order: order) { return (nil, true) }
        do {
            let (entry, _) = try await stack.loads.read(flightKey) {
                let (entry, startedAt, declined) = try await loadAlone(key, load, flightKey: flightKey, endedBefore: endedBefore)
                return (entry, startedAt, forJoiners: !declined)
            }
            return (entry, false)
        } catch is ReadFlights<Value>.ReadAgain {
            // The load it joined landed nowhere: a level below holds a newer
            // value, written after the load began, perhaps before this get did.
            let endedBefore = order.ended.load(ordering: .acquiring)
            if let entry = try? await entry(forKey: key) { return (entry, true) }
            return (try await loadAlone(key, load, flightKey: flightKey, endedBefore: endedBefore).entry, false)
        }
    }

    /// Gets that joined a load in flight so far (tests).
    package var loadsJoined: Int { stack.loads.joined }

    /// One load of `key`, landed in both levels (or remembered as not found);
    /// `declined`: the lower level declined it (it holds a newer value).
    /// `endedBefore`: ``WriteOrder/ended`` before the caller's miss (`nil`: unknown).
    private func loadAlone(_ key: Key, _ load: (Key) async throws -> Loaded<Value>, flightKey: FlightKey?, endedBefore: UInt64?)
    async throws -> (entry: CacheEntry<Value>?, startedAt: ContinuousClock.Instant, declined: Bool) {
        let ticket = order.beginRead(key)
        let startedAt = ticket?.startedAt ?? ContinuousClock.now
        let clock = stack.clock
        // A caller that missed before a load or a write through the stack
        // ended, and leads a new flight after, finds what it wrote here. Only
        // then: the upper level counts this look as one more get.
        if endedBefore != order.ended.load(ordering: .acquiring),
           let entry = try? await upper.entry(forKey: key) { return (entry, startedAt, false) }
        switch try await load(key) {
        case .notFound(let ttl):
            if let ttl, ttl > .zero, let ticket, let flightKey {
                stack.notFound.remember(flightKey, ticket: ticket, until: clock.now().advanced(by: ttl))
            }
            return (nil, startedAt, false)
        case .value(let value, let ttl):
            if let flightKey { stack.notFound.forget(flightKey) }
            let entry = CacheEntry(value: value, expiresAt: ttl.map { clock.now().advanced(by: $0) })
            let declined = if let ticket { await land(entry, forKey: key, ticket: ticket) } else { false }
            return (entry, startedAt, declined)
        }
    }

    /// Loads `key` again and replaces `seen` with the answer in every level
    /// (``replace(_:with:forKey:)``: a shared store replaces only what it
    /// still holds), unless a write or a reported change touched the key
    /// since the load began; returns the value if it landed. A refresh
    /// ahead of expiry: counted as a write, so reads begun before it
    /// back-fill nothing.
    package func refresh(_ key: Key, replacing seen: Value, ttl: Duration?, jitter: Duration,
                         load: @Sendable (Key) async throws -> Value) async throws -> Value? {
        guard let ticket = order.beginRead(key) else { return nil }
        let value = try await load(key)
        let upper = self.upper, stack = self.stack, now = stack.clock.now()
        let fill = Backfill(value: value, expiresAt: Self.jittered(ttl, jitter).map { now.advanced(by: $0) },
                            readStartedAt: ticket.startedAt)
        let landed = try await CacheContext.writing(as: stack.writer) {
            try await stack.order.land(ticket, asWrite: true, { _ in
                try await self.replacing(seen, with: fill, forKey: key)
            }, undo: { upper.lostCoherence() })
        }
        return landed ? value : nil
    }

    /// `ttl` plus up to `jitter`, at random (`nil` stays `nil`).
    static func jittered(_ ttl: Duration?, _ jitter: Duration) -> Duration? {
        guard let ttl, jitter > .zero else { return ttl }
        return ttl + .nanoseconds(Int64.random(in: 0...jitter.nanoseconds))
    }

    /// Writes a loaded entry into both levels as a back-fill (`lower` first,
    /// `upper` unless `lower` declined it), if `ticket` is still current;
    /// returns whether `lower` declined it.
    /// A level that fails keeps nothing of it and fails nothing else.
    @discardableResult
    func land(_ entry: CacheEntry<Value>, forKey key: Key, ticket: WriteOrder.Ticket) async -> Bool {
        let upper = self.upper, lower = self.lower, stack = self.stack
        let declined = Mutex(false)
        _ = try? await CacheContext.writing(as: stack.writer) {
            try await stack.order.land(ticket, { startedAt in
                // Not the loads: gets arriving meanwhile join this load, whose
                // answer is what lands (a new load would call the loader again).
                stack.detachReadsBelow(.key(key))
                defer { stack.detachReadsBelow(.key(key)) }
                let fill = Backfill(value: entry.value, expiresAt: entry.expiresAt, readStartedAt: startedAt)
                if await attempt({ try await lower.backfill(fill, forKey: key) }) is BackfillDeclined {
                    declined.withLock { $0 = true }
                    return
                }
                _ = await attempt { try await upper.backfill(fill, forKey: key) }
            }, undo: { upper.lostCoherence() })
        }
        return declined.withLock { $0 }
    }
}

extension ComposedCache where Key: Hashable {
    /// The values for `keys` the levels have, and for the others what one
    /// call of `load` finds (asked only for the keys no level has), kept
    /// `ttl` (plus up to `jitter`, per key) in every level. Keys `load` leaves out are absent from the
    /// answer and not remembered. Concurrent calls do not share loads
    /// (``get(_:ttl:jitter:load:)`` does).
    public func getAll(_ keys: [Key], ttl: Duration?, jitter: Duration = .zero,
                       load: @escaping @Sendable ([Key]) async throws -> [Key: Value]) async throws -> [Key: Value] {
        _ = try await FetchError.getting(keys, in: name) { try ExpiryError.checked(ttl) }
        var seen = Set<Key>()
        let unique = keys.filter { seen.insert($0).inserted }
        var answer: [Key: Value] = [:]
        var missing: [Key] = []
        for (key, entry) in zip(unique, await entries(forKeys: unique, maxConcurrency: nil)) {
            if let entry { answer[key] = entry.value } else { missing.append(key) }
        }
        guard !missing.isEmpty else { return answer }
        try Task.checkCancellation()
        let tickets = missing.map { order.beginRead($0) }
        let loaded = try await FetchError.getting(missing, in: name) { try await load(missing) }
        let clock = stack.clock
        let now = clock.now()
        var landings: [(Key, CacheEntry<Value>, WriteOrder.Ticket)] = []
        for (key, ticket) in zip(missing, tickets) {
            guard let value = loaded[key] else { continue }
            answer[key] = value
            if let flightKey = ReadFlights<Value>.flightKey(key) { stack.notFound.forget(flightKey) }
            let expiresAt = Self.jittered(ttl, jitter).map { now.advanced(by: $0) }
            if let ticket { landings.append((key, CacheEntry(value: value, expiresAt: expiresAt), ticket)) }
        }
        await withTaskGroup(of: Void.self) { group in
            for (key, entry, ticket) in landings { group.addTask { await self.land(entry, forKey: key, ticket: ticket) } }
        }
        return answer
    }
}
