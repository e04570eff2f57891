/// A level built from closures; also the type-erased form of any level
/// (see ``CacheLevel/normalize()``).
public struct BasicCache<Key: Sendable, Value: Sendable>: CacheLevel {
    /// Returns the value, or `nil` on a miss.
    public typealias GetIfPresent = @Sendable (Key) async throws -> Value?
    /// Throws ``FetchError/valueNotInCache`` on a miss (Carlos's form).
    public typealias Get = @Sendable (Key) async throws -> Value
    /// Stores the value under the key.
    public typealias Store = @Sendable (Value, Key) async throws -> Void
    /// Removes the key's value; removing an absent key is not an error.
    public typealias Remove = @Sendable (Key) async throws -> Void
    /// A clear, a memory warning or a wait for pending writes: no key, never fails.
    public typealias Action = @Sendable () async -> Void

    @usableFromInline let getIfPresentClosure: GetIfPresent
    @usableFromInline let entryClosure: (@Sendable (Key) async throws -> CacheEntry<Value>?)?
    @usableFromInline let entriesClosure: (@Sendable ([Key], Int?) async -> [CacheEntry<Value>?])?
    @usableFromInline let setClosure: Store
    @usableFromInline let setExpiringClosure: (@Sendable (Value, Key, CacheInstant?) async throws -> Void)?
    @usableFromInline let removeClosure: Remove
    @usableFromInline let clearClosure: Action
    @usableFromInline let memoryWarningClosure: Action
    @usableFromInline let pendingWritesClosure: Action?
    /// The erased level's ``CacheLevel/invalidate(_:)`` (`nil`: the default, through `remove` and `clear`).
    @usableFromInline let invalidateClosure: (@Sendable (CacheInvalidation<Key>) async throws -> Void)?
    /// The erased level's ``CacheLevel/backfill(_:forKey:)`` (`nil`: a set).
    @usableFromInline let backfillClosure: (@Sendable (Backfill<Value>, Key) async throws -> Void)?
    /// The erased level's ``CacheLevel/replace(_:with:forKey:)`` (`nil`: the default, a remove).
    @usableFromInline let replaceClosure: (@Sendable (Value, Backfill<Value>, Key) async throws -> Void)?
    /// The erased level's ``CacheLevel/lostCoherence()``.
    @usableFromInline let lostCoherenceClosure: (@Sendable () -> Void)?
    @usableFromInline let subscribeClosure: (@Sendable (@escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription)?
    /// The erased level's ``CacheLevel/synchronousRead``, tried before the
    /// `async` closures.
    public let synchronousRead: SynchronousRead<Key, Value>?
    /// Whether the erased level's synchronous read is its whole read
    /// (``CacheLevel/synchronousReadIsComplete``): then a `nil` from it is a miss.
    public let synchronousReadIsComplete: Bool
    /// The erased level's own counters (``LevelCounterReporting``), if any.
    @usableFromInline let levelCountersClosure: (@Sendable () -> [String: Int])?
    /// The statistics of the instrumented levels inside the erased level (``CacheLevel/levelStatistics``).
    @usableFromInline let statisticsClosure: (@Sendable () -> [LevelStatistics])?
    /// The erased level's ``LevelInspector`` (as `Any`: the type is the package's own).
    @usableFromInline let inspectorClosure: (@Sendable () -> Any?)?
    /// The erased level's ``CacheLevel/sharesReadsInFlight``.
    public let sharesReadsInFlight: Bool
    /// The erased level's ``CacheLevel/endSharingReads(_:)`` (only for one that shares reads).
    @usableFromInline let endSharingClosure: (@Sendable (CacheInvalidation<Key>) -> Void)?
    public let name: String

    /// A level from closures; `getIfPresent` returns `nil` on a miss.
    public init(
        name: String = "basic",
        getIfPresent: @escaping GetIfPresent,
        set: @escaping Store,
        remove: @escaping Remove,
        clear: @escaping Action,
        onMemoryWarning: @escaping Action
    ) {
        self.init(name: name, getIfPresent: getIfPresent, entry: nil, entries: nil, set: set, setExpiring: nil, remove: remove,
                  clear: clear, onMemoryWarning: onMemoryWarning, waitForPendingWrites: nil, subscribe: nil)
    }

    /// A level from closures, Carlos's form: `get` throws
    /// ``FetchError/valueNotInCache`` on a miss (any ``FetchError`` that
    /// ``FetchError/isMiss`` is a miss).
    public init(
        name: String = "basic",
        get: @escaping Get,
        set: @escaping Store,
        remove: @escaping Remove,
        clear: @escaping Action,
        onMemoryWarning: @escaping Action
    ) {
        self.init(name: name, getIfPresent: missAsNil(get), set: set, remove: remove,
                  clear: clear, onMemoryWarning: onMemoryWarning)
    }

    @usableFromInline
    init(name: String, getIfPresent: @escaping GetIfPresent,
         entry: (@Sendable (Key) async throws -> CacheEntry<Value>?)?,
         entries: (@Sendable ([Key], Int?) async -> [CacheEntry<Value>?])?,
         set: @escaping Store, setExpiring: (@Sendable (Value, Key, CacheInstant?) async throws -> Void)?,
         remove: @escaping Remove, clear: @escaping Action, onMemoryWarning: @escaping Action,
         waitForPendingWrites: Action?,
         subscribe: (@Sendable (@escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription)?,
         synchronousRead: SynchronousRead<Key, Value>? = nil,
         synchronousReadIsComplete: Bool = false,
         levelCounters: (@Sendable () -> [String: Int])? = nil,
         sharesReadsInFlight: Bool = false,
         endSharingReads: (@Sendable (CacheInvalidation<Key>) -> Void)? = nil,
         invalidate: (@Sendable (CacheInvalidation<Key>) async throws -> Void)? = nil,
         lostCoherence: (@Sendable () -> Void)? = nil,
         backfill: (@Sendable (Backfill<Value>, Key) async throws -> Void)? = nil,
         replace: (@Sendable (Value, Backfill<Value>, Key) async throws -> Void)? = nil,
         statistics: (@Sendable () -> [LevelStatistics])? = nil,
         inspector: (@Sendable () -> Any?)? = nil) {
        self.statisticsClosure = statistics
        self.inspectorClosure = inspector
        self.backfillClosure = backfill
        self.replaceClosure = replace
        self.lostCoherenceClosure = lostCoherence
        self.name = name
        self.invalidateClosure = invalidate
        self.sharesReadsInFlight = sharesReadsInFlight
        self.endSharingClosure = endSharingReads
        self.synchronousRead = synchronousRead
        self.synchronousReadIsComplete = synchronousRead != nil && synchronousReadIsComplete
        self.levelCountersClosure = levelCounters
        self.getIfPresentClosure = getIfPresent
        self.entryClosure = entry
        self.entriesClosure = entries
        self.setClosure = set
        self.setExpiringClosure = setExpiring
        self.removeClosure = remove
        self.clearClosure = clear
        self.memoryWarningClosure = onMemoryWarning
        self.pendingWritesClosure = waitForPendingWrites
        self.subscribeClosure = subscribe
    }

    @inlinable @inline(__always) public func getIfPresent(_ key: Key) async throws -> Value? {
        if let value = synchronousRead?.value(key) { return value }
        if synchronousReadIsComplete { return nil }
        return try await getIfPresentClosure(key)
    }

    @inlinable public func synchronousValue(forKey key: Key) -> Value? { synchronousRead?.value(key) }

    @inlinable public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        if let entry = synchronousRead?.entry(key) { return entry }
        if synchronousReadIsComplete { return nil }
        if let entryClosure { return try await entryClosure(key) }
        return try await getIfPresentClosure(key).map { CacheEntry(value: $0) }
    }

    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        if let entriesClosure { return await entriesClosure(keys, maxConcurrency) }
        return await concurrentEntries(keys, maxConcurrency: maxConcurrency) { try? await self.entry(forKey: $0) }
    }

    @inlinable public func set(_ value: Value, forKey key: Key) async throws { try await setClosure(value, key) }

    @inlinable public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        if let setExpiringClosure { return try await setExpiringClosure(value, key, expiresAt) }
        try await setClosure(value, key)
    }

    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        if let backfillClosure { return try await backfillClosure(fill, key) }
        try await set(fill.value, forKey: key, expiresAt: fill.expiresAt)
    }

    /// The erased level's refresh (a memory level stores it, a composition
    /// replaces below then above); without one, the key is removed.
    public func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws {
        if let replaceClosure { return try await replaceClosure(seen, fill, key) }
        try await removeClosure(key)
    }

    @inlinable public func remove(_ key: Key) async throws { try await removeClosure(key) }
    @inlinable public func clear() async { await clearClosure() }
    public func invalidate(_ invalidation: CacheInvalidation<Key>) async throws {
        if let invalidateClosure { return try await invalidateClosure(invalidation) }
        switch invalidation {
        case .key(let key): try await removeClosure(key)
        case .all, .contactLost: await clearClosure()
        }
    }
    @inlinable public func onMemoryWarning() async { await memoryWarningClosure() }
    public func waitForPendingWrites() async { await pendingWritesClosure?() }
    public func subscribe(_ listener: @escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription {
        subscribeClosure?(listener) ?? .none
    }
    public func endSharingReads(_ invalidation: CacheInvalidation<Key>) { endSharingClosure?(invalidation) }
    public func lostCoherence() { lostCoherenceClosure?() }
}

extension BasicCache: InspectableLevel {
    /// The inspector of the level it erases, if that one has one.
    package var inspector: LevelInspector<Key, Value>? { inspectorClosure?() as? LevelInspector<Key, Value> }
}

extension BasicCache: LevelCounterReporting {
    /// The counters of the level it erases (empty when that level keeps none).
    public var levelCounters: [String: Int] { levelCountersClosure?() ?? [:] }
}

/// A read-only level from a closure.
public struct BasicFetcher<Key: Sendable, Value: Sendable>: Fetcher {
    @usableFromInline let getIfPresentClosure: @Sendable (Key) async throws -> Value?
    public let name: String

    /// `get` throws ``FetchError/valueNotInCache`` when the origin has nothing
    /// (any ``FetchError`` that ``FetchError/isMiss`` is a miss).
    public init(name: String = "fetcher", get: @escaping @Sendable (Key) async throws -> Value) {
        self.name = name
        self.getIfPresentClosure = missAsNil(get)
    }

    /// `getIfPresent` returns `nil` when the origin has nothing.
    public init(name: String = "fetcher", getIfPresent: @escaping @Sendable (Key) async throws -> Value?) {
        self.name = name
        self.getIfPresentClosure = getIfPresent
    }

    @inlinable public func getIfPresent(_ key: Key) async throws -> Value? { try await getIfPresentClosure(key) }
}

/// Adapts a throwing-miss closure to the optional primitive.
@usableFromInline
func missAsNil<Key: Sendable, Value: Sendable>(
    _ get: @escaping @Sendable (Key) async throws -> Value
) -> @Sendable (Key) async throws -> Value? {
    { key in
        do { return try await get(key) } catch let error as FetchError where error.isMiss { return nil }
    }
}

extension CacheLevel {
    /// This level erased to ``BasicCache``; returns `self` when it already is one.
    ///
    /// The closures are compiled where `normalize()` is called, for the
    /// level's concrete type, so call it where that type is known. A level
    /// with a ``synchronousRead`` (a memory level, a composition with one on
    /// top) answers its hits through it, without suspending.
    @inlinable
    public func normalize() -> BasicCache<Key, Value> {
        if let already = self as? BasicCache<Key, Value> { return already }
        var endSharing: (@Sendable (CacheInvalidation<Key>) -> Void)?
        if sharesReadsInFlight { endSharing = { self.endSharingReads($0) } }
        return BasicCache(
            name: name,
            getIfPresent: { try await self.getIfPresent($0) },
            entry: { try await self.entry(forKey: $0) },
            entries: { await self.entries(forKeys: $0, maxConcurrency: $1) },
            set: { try await self.set($0, forKey: $1) },
            setExpiring: { try await self.set($0, forKey: $1, expiresAt: $2) },
            remove: { try await self.remove($0) },
            clear: { await self.clear() },
            onMemoryWarning: { await self.onMemoryWarning() },
            waitForPendingWrites: { await self.waitForPendingWrites() },
            subscribe: { self.subscribe($0) },
            synchronousRead: synchronousRead,
            synchronousReadIsComplete: synchronousReadIsComplete,
            levelCounters: levelCounterSource(of: self),
            sharesReadsInFlight: sharesReadsInFlight,
            endSharingReads: endSharing,
            invalidate: { try await self.invalidate($0) },
            lostCoherence: { self.lostCoherence() },
            backfill: { try await self.backfill($0, forKey: $1) },
            replace: { try await self.replace($0, with: $1, forKey: $2) },
            statistics: { statisticsInside(self) },
            inspector: { erasedInspectorInside(self) }
        )
    }
}
