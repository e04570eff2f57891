import Foundation

/// Errors of expiry arguments: rejected at the call that carries them, never a trap.
public enum ExpiryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A TTL that is negative, or not a number.
    case invalidTTL(String)

    /// One line naming the rejected TTL.
    public var description: String {
        switch self {
        case .invalidTTL(let ttl): "invalid TTL \(ttl): a TTL must be zero or positive"
        }
    }
}

extension ExpiryError {
    /// `ttl` if it is `nil` or zero or more; else throws ``invalidTTL(_:)``
    /// naming it, and `role` after it (`"defaultTTL"`) when given. A negative
    /// TTL taken as "already expired" would make a level, or a loading get,
    /// keep nothing, without a word.
    @discardableResult
    @usableFromInline package static func checked(_ ttl: Duration?, role: String? = nil) throws -> Duration? {
        if let ttl, !(ttl >= .zero) { throw ExpiryError.invalidTTL(role.map { "\(ttl) (\($0))" } ?? "\(ttl)") }
        return ttl
    }
}

/// When entries written through ``CacheLevel/expires(at:)`` expire.
///
/// Any date and any duration is accepted: far-future dates and durations too
/// large to represent mean "never" (they saturate). A negative or NaN TTL makes
/// every set through the level throw ``ExpiryError/invalidTTL(_:)``.
public enum Expiry: Sendable, Equatable {
    /// This long after each set.
    case after(Duration)
    /// At this date, for every entry.
    case date(Date)
    /// Never (the level's own capacity still evicts).
    case never
    /// A TTL that was rejected (negative or NaN); sets throw.
    case invalid(String)

    /// This many seconds after each set: `.seconds(30)`, `.seconds(0.5)`.
    /// `.infinity` and values too large for a deadline mean ``never``.
    public static func seconds(_ seconds: Double) -> Expiry {
        if seconds.isNaN || seconds < 0 { return .invalid("\(seconds) s") }
        // Int64 nanoseconds reach ~292 years; anything longer never expires.
        if seconds >= 9.0e9 { return .never }
        return .after(.nanoseconds(Int64((seconds * 1e9).rounded())))
    }

    /// The deadline for an entry written at `now` (`nil`: never).
    public func deadline(from now: CacheInstant) throws -> CacheInstant? {
        switch self {
        case .after(let duration): try now.advanced(byTTL: duration)
        case .date(let date): CacheInstant(date)
        case .never: nil
        case .invalid(let text): throw ExpiryError.invalidTTL(text)
        }
    }
}

/// A level that stores an expiry with each entry and measures it against an
/// injectable clock: an expired entry reads as a miss and is deleted;
/// ``removeExpired()`` sweeps.
public protocol ExpirableCacheLevel<Key, Value>: CacheLevel {
    /// The clock expiry is measured against.
    var clock: any CacheClock { get }
    /// Deletes every expired entry and returns how many there were.
    @discardableResult func removeExpired() async -> Int
}

extension ExpirableCacheLevel {
    /// Stores `value` expiring `ttl` from now on this level's clock. A negative
    /// TTL throws ``ExpiryError/invalidTTL(_:)``.
    public func set(_ value: Value, forKey key: Key, ttl: Duration) async throws {
        try await set(value, forKey: key, expiresAt: try clock.now().advanced(byTTL: ttl))
    }

    /// Every set through the returned level expires per `expiry`, measured on
    /// this level's clock (Droste's `expires(at:)`).
    public func expires(at expiry: Expiry) -> ExpiringCache<Self> {
        ExpiringCache(self, expiry: expiry, clock: clock)
    }
}

extension CacheLevel {
    /// Every set through the returned level expires per `expiry`, measured on
    /// the system clock; works on compositions (`(memory + disk).expires(at:)`)
    /// and erased levels. Sets that carry their own deadline keep it.
    public func expires(at expiry: Expiry) -> ExpiringCache<Self> {
        ExpiringCache(self, expiry: expiry, clock: SystemClock())
    }
}

/// A level whose sets carry an expiry: see ``CacheLevel/expires(at:)``.
public struct ExpiringCache<Inner: CacheLevel>: WrapperLevel {
    /// The inner level's key.
    public typealias Key = Inner.Key
    /// The inner level's value.
    public typealias Value = Inner.Value

    public let inner: Inner
    /// When entries set through this level expire.
    public let expiry: Expiry
    /// The clock deadlines are computed from.
    public let clock: any CacheClock

    /// `inner` with sets expiring per `expiry`, measured on `clock`.
    public init(_ inner: Inner, expiry: Expiry, clock: any CacheClock = SystemClock()) {
        self.inner = inner
        self.expiry = expiry
        self.clock = clock
    }

    public func getIfPresent(_ key: Key) async throws -> Value? { try await inner.getIfPresent(key) }
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? { try await inner.entry(forKey: key) }
    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        await inner.entries(forKeys: keys, maxConcurrency: maxConcurrency)
    }
    public func set(_ value: Value, forKey key: Key) async throws {
        try await inner.set(value, forKey: key, expiresAt: try expiry.deadline(from: clock.now()))
    }
    /// A set's own deadline is kept; a back-fill's is capped at this level's
    /// expiry (``StoredDeadline``).
    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        let deadline = try StoredDeadline.resolve(given: expiresAt, backfill: false) { try expiry.deadline(from: clock.now()) }
        try await inner.set(value, forKey: key, expiresAt: deadline)
    }
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        var fill = fill
        fill.expiresAt = try StoredDeadline.resolve(given: fill.expiresAt, backfill: true) { try expiry.deadline(from: clock.now()) }
        try await inner.backfill(fill, forKey: key)
    }
    public func remove(_ key: Key) async throws { try await inner.remove(key) }
}

extension ExpiringCache: ExpirableCacheLevel where Inner: ExpirableCacheLevel {
    @discardableResult public func removeExpired() async -> Int { await inner.removeExpired() }
}
