import Foundation

/// When entries written through ``ExpirableCacheLevel/expires(at:)`` expire.
public enum Expiry: Sendable, Equatable {
    /// This many seconds after each set.
    case seconds(Double)
    /// At this date, for every entry.
    case date(Date)

    /// The deadline for an entry written at `now`.
    public func deadline(from now: CacheInstant) -> CacheInstant {
        switch self {
        case .seconds(let seconds): now.advanced(by: .nanoseconds(Int64((seconds * 1e9).rounded())))
        case .date(let date): CacheInstant(date)
        }
    }
}

/// A level that stores an expiry with each entry: an expired entry reads as a
/// miss and is deleted; ``removeExpired()`` sweeps.
public protocol ExpirableCacheLevel<Key, Value>: CacheLevel {
    /// The clock expiry is measured against.
    var clock: any CacheClock { get }
    /// Stores `value` expiring at `expiresAt` (`nil`: the level's default TTL, if any).
    func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws
    /// Deletes every expired entry and returns how many there were.
    @discardableResult func removeExpired() async -> Int
}

extension ExpirableCacheLevel {
    /// Stores `value` expiring `ttl` from now.
    public func set(_ value: Value, forKey key: Key, ttl: Duration) async throws {
        try await set(value, forKey: key, expiresAt: clock.now().advanced(by: ttl))
    }

    /// Every set through the returned level expires per `expiry` (Droste's `expires(at:)`).
    public func expires(at expiry: Expiry) -> ExpiringCache<Self> { ExpiringCache(self, expiry: expiry) }
}

/// A level whose sets carry an expiry: see ``ExpirableCacheLevel/expires(at:)``.
public struct ExpiringCache<Inner: ExpirableCacheLevel>: ExpirableCacheLevel {
    public typealias Key = Inner.Key
    public typealias Value = Inner.Value

    public let inner: Inner
    public let expiry: Expiry

    public init(_ inner: Inner, expiry: Expiry) {
        self.inner = inner
        self.expiry = expiry
    }

    public var name: String { inner.name }
    public var clock: any CacheClock { inner.clock }

    public func get(_ key: Key) async throws -> Value { try await inner.get(key) }
    public func getIfPresent(_ key: Key) async throws -> Value? { try await inner.getIfPresent(key) }
    public func set(_ value: Value, forKey key: Key) async throws {
        try await inner.set(value, forKey: key, expiresAt: expiry.deadline(from: inner.clock.now()))
    }
    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await inner.set(value, forKey: key, expiresAt: expiresAt ?? expiry.deadline(from: inner.clock.now()))
    }
    public func remove(_ key: Key) async throws { try await inner.remove(key) }
    public func clear() async { await inner.clear() }
    public func onMemoryWarning() async { await inner.onMemoryWarning() }
    public func waitForPendingWrites() async { await inner.waitForPendingWrites() }
    @discardableResult public func removeExpired() async -> Int { await inner.removeExpired() }
}
