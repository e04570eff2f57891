/// One level of a cache: memory, disk, a shared store, a network origin, or any
/// composition of those.
///
/// **One way to report a miss.** A level implements ``getIfPresent(_:)``, which
/// returns `nil` on a miss (or when a condition skips the level for the key);
/// ``get(_:)`` is derived from it and throws ``FetchError/valueNotInCache``.
/// Every other error is a real failure.
///
/// **Expiry travels with the value.** Levels that store an expiry report it
/// through ``entry(forKey:)`` and accept one through
/// ``set(_:forKey:expiresAt:)``; a composition uses both so that a back-fill
/// keeps the lower entry's deadline instead of starting a fresh TTL. Levels
/// without expiry get defaults: entries never expire, and an explicit deadline
/// is ignored by a plain ``set(_:forKey:)``.
///
/// All operations run on the caller's executor (the package enables
/// `NonisolatedNonsendingByDefault`), so a caller on an actor pays no executor hop
/// per request; levels that block (disk IO) offload that work themselves.
public protocol CacheLevel<Key, Value>: Sendable {
    /// What the level is addressed by.
    associatedtype Key: Sendable
    /// What the level stores or returns for a key.
    associatedtype Value: Sendable

    /// The value for `key`, or `nil` on a miss (or when a condition skips this
    /// level). Real failures throw. This is the one read every level implements.
    func getIfPresent(_ key: Key) async throws -> Value?

    /// The value for `key` with its expiry, or `nil` on a miss.
    /// Default: ``getIfPresent(_:)`` with no expiry.
    func entry(forKey key: Key) async throws -> CacheEntry<Value>?

    /// The entries for `keys`, in the same order: `nil` for a miss **or a
    /// failure** (a batch read is best effort). At most `maxConcurrency` reads
    /// run at once (`nil`: unbounded). Levels that can fetch many keys in one
    /// round trip (Redis `MGET`) implement it; compositions ask each level only
    /// for the keys still missing. Default: ``entry(forKey:)`` per key,
    /// concurrently.
    func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?]

    /// Stores `value` for `key`.
    func set(_ value: Value, forKey key: Key) async throws

    /// Stores `value` for `key`, expiring at `expiresAt` (`nil`: the level's
    /// default, if any). Default: ``set(_:forKey:)`` (a level with no expiry
    /// keeps the value until it is removed or evicted, or declines it on
    /// arrival under ``EvictionPolicy/adaptive``).
    func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws

    /// Writes what a stack read from a level below into this level, to fill
    /// a miss here (see ``Backfill``). Throws ``BackfillDeclined`` when this
    /// level holds a newer value and keeps it. Default: a set with the
    /// back-fill's deadline; levels with a TTL of their own cap it there
    /// (``StoredDeadline``); a shared store keeps a newer value (Redis:
    /// `SET NX`, tombstones, leases).
    func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws

    /// Removes `key`. Removing an absent key is not an error.
    func remove(_ key: Key) async throws

    /// Replaces `seen`, the value a stack read from this level for `key`,
    /// with `fill`'s (a refresh ahead of expiry, ``ResilientCache``); throws
    /// ``BackfillDeclined`` when the level holds another value now and keeps
    /// it. `seen` must never be answered again. Default: the key is removed
    /// (safe for any store: at worst a later miss); a memory level stores
    /// the fill, Redis replaces the value only if it still holds `seen`,
    /// and a stack replaces below, then above.
    func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws

    /// Removes everything this level stores.
    func clear() async

    /// Drops what a change made elsewhere names (the key, or everything):
    /// a composition calls it on its upper level when its lower level
    /// reports such a change. Not a user's remove: an instrumented level
    /// counts it as an invalidation. Default: ``CacheLevel/remove(_:)`` or ``CacheLevel/clear()``.
    func invalidate(_ invalidation: CacheInvalidation<Key>) async throws

    /// Releases what can be rebuilt (memory levels empty themselves).
    func onMemoryWarning() async

    /// A short human-readable name used in errors, logs and statistics.
    var name: String { get }

    /// Returns once the background writes this level started (back-fills of a
    /// composition) have finished. Wrappers forward it; plain levels return at once.
    func waitForPendingWrites() async

    /// Subscribes `listener` to the changes made to this level's store by
    /// others (another process, another client of a shared store), until
    /// the returned subscription is cancelled or released. A level over a
    /// shared store (disk, Redis) reports them; wrappers pass the
    /// subscription on to the levels they hold; a stack (``ComposedCache``)
    /// subscribes to its levels for as long as it lives, and drops from its
    /// upper level what its lower level reports. Default: nothing is reported.
    func subscribe(_ listener: @escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription

    /// Told, without suspending, that what this level holds may predate
    /// changes to a level below it that reports them: a stack over both is
    /// built (nobody may have listened before, e.g. a process killed with -9)
    /// or is gone. A level that can rebuild what it holds forgets it (a
    /// memory level empties itself, a disk level reads older entries as
    /// misses). Default: nothing; wrappers forward it; a composition passes
    /// it to both its levels.
    func lostCoherence()

    /// What a stack over this level tells it apart by (a second stack alive
    /// over one upper level is warned about): the level's object, a
    /// wrapper's inner level's, `nil` for a level that is a value. The
    /// defaults are right for every level: nothing to implement.
    var stackIdentity: ObjectIdentifier? { get }

    /// Reads that answer a hit without suspending, when this level has them
    /// (a ``MemoryCacheLevel``, a composition whose top level is one); `nil`
    /// otherwise. ``CacheLevel/normalize()`` takes them once, so an erased hit costs a
    /// plain closure call instead of an `async` one. Default: `nil`.
    var synchronousRead: SynchronousRead<Key, Value>? { get }

    /// ``CacheLevel/synchronousRead``'s value read, without building it: ``CacheLevel/get(_:)`` asks
    /// it first when it runs without the level's concrete type (`any CacheLevel`,
    /// an unspecialised generic caller). Default: `nil` ("not answered here").
    func synchronousValue(forKey key: Key) -> Value?

    /// Whether `nil` from the synchronous reads is a miss (a
    /// ``MemoryCacheLevel``: see ``SynchronousRead``). Default: `false`.
    var synchronousReadIsComplete: Bool { get }

    /// Whether a get may be answered with the result of a read that began
    /// before it (``PooledCache`` joins reads in flight), here or in a level
    /// inside. A composition whose lower level does this tells it when its
    /// own read began (``CacheContext``'s read start), so that a back-fill is
    /// judged by the read that saw the data; others skip that (it costs an
    /// executor hop). Default: `false`; wrappers (``WrapperLevel``) forward it.
    var sharesReadsInFlight: Bool { get }

    /// Ends the sharing of reads in flight for what `invalidation` names (one
    /// key, or every key): a get that arrives afterwards reads for itself. A
    /// composition calls it on its lower level when a level above reports a
    /// change made elsewhere. Default: nothing; wrappers and compositions
    /// forward it; ``PooledCache`` detaches its reads in flight.
    func endSharingReads(_ invalidation: CacheInvalidation<Key>)
}

/// A value read from a level together with its expiry.
public struct CacheEntry<Value: Sendable>: Sendable {
    /// The value the level stored or a loader returned.
    public var value: Value
    /// When the entry expires, or `nil` for never (or unknown to the level).
    public var expiresAt: CacheInstant?

    /// An entry holding `value` until `expiresAt` (`nil`: no deadline).
    @inlinable
    public init(value: Value, expiresAt: CacheInstant? = nil) {
        self.value = value
        self.expiresAt = expiresAt
    }
}

extension CacheEntry: Equatable where Value: Equatable {}

extension CacheLevel {
    /// The value for `key`. Throws a ``FetchError`` naming this level and
    /// the key: ``FetchError/Reason/valueNotInCache`` on a miss,
    /// ``FetchError/Reason/levelsFailed`` when the read failed.
    @inlinable @inline(__always)
    public func get(_ key: Key) async throws -> Value {
        // Without the concrete type an `async` witness call costs a task
        // frame and an executor check; a memory hit needs neither.
        if !_isConcrete(Self.self) {
            if let value = synchronousValue(forKey: key) { return value }
            if synchronousReadIsComplete { throw FetchError.notFound(key, in: name) }
        }
        let found: Value?
        do { found = try await getIfPresent(key) } catch { throw FetchError.failed(error, key: key, in: name) }
        guard let value = found else { throw FetchError.notFound(key, in: name) }
        return value
    }

    @inlinable
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        guard let value = try await getIfPresent(key) else { return nil }
        return CacheEntry(value: value)
    }

    @inlinable
    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await set(value, forKey: key)
    }

    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        await concurrentEntries(keys, maxConcurrency: maxConcurrency) { try? await self.entry(forKey: $0) }
    }

    /// Stores `value` expiring `ttl` from now (system clock). Levels with an
    /// injected clock (``ExpirableCacheLevel``) measure from their own clock.
    @inlinable
    public func set(_ value: Value, forKey key: Key, ttl: Duration) async throws {
        try await set(value, forKey: key, expiresAt: try SystemClock().now().advanced(byTTL: ttl))
    }

    public var name: String { defaultLevelName(Self.self) }

    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try await set(fill.value, forKey: key, expiresAt: fill.expiresAt)
    }

    public func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws {
        try await remove(key)
    }

    public func invalidate(_ invalidation: CacheInvalidation<Key>) async throws {
        switch invalidation {
        case .key(let key): try await remove(key)
        case .all, .contactLost: await clear()
        }
    }

    public func waitForPendingWrites() async {}

    public func subscribe(_ listener: @escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription {
        .none
    }

    public func lostCoherence() {}

    public var stackIdentity: ObjectIdentifier? { nil }

    public var synchronousRead: SynchronousRead<Key, Value>? { nil }

    @inlinable
    public func synchronousValue(forKey key: Key) -> Value? { nil }

    @inlinable
    public var synchronousReadIsComplete: Bool { false }

    @inlinable
    public var sharesReadsInFlight: Bool { false }

    public func endSharingReads(_ invalidation: CacheInvalidation<Key>) {}
}

extension CacheLevel where Self: AnyObject {
    public var stackIdentity: ObjectIdentifier? { ObjectIdentifier(self) }
}

/// A short name for a level type: the type name without its generic arguments.
@usableFromInline
func defaultLevelName(_ type: Any.Type) -> String {
    let full = String(describing: type)
    if let angle = full.firstIndex(of: "<") { return String(full[..<angle]) }
    return full
}
