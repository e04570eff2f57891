import Foundation
import Strata

/// The levels above the origin, as one stack whose gets load through it.
typealias UpperStack = ComposedCache<BasicCache<String, Data>, BasicCache<String, Data>>

/// A pipeline under `refresh-ahead:`: every get is a loading get
/// (``ResilientCache/get(_:ttl:jitter:load:)``) of the levels above the
/// origin, with the origin level (instrumented and wrapped as in any
/// pipeline) as the loader and its `ttl` as the values' TTL. A hit past the
/// refresh-ahead fraction starts one background refresh of the key; a key
/// the origin does not have (`missing:…`) is a miss, as in a plain pipeline.
/// Writes go to the levels above (the origin stores nothing).
struct LoadingStack: WrapperLevel {
    typealias Key = String
    typealias Value = Data

    let inner: ResilientCache<UpperStack>
    let origin: BasicCache<String, Data>
    let ttl: Duration

    func getIfPresent(_ key: String) async throws -> Data? {
        do {
            return try await inner.get(key, ttl: ttl) { [origin] key in
                guard let value = try await origin.getIfPresent(key) else {
                    throw FetchError(.valueNotInCache, level: origin.name, key: key)
                }
                return value
            }
        } catch let error as FetchError where error.isMiss {
            return nil
        }
    }

    func entry(forKey key: String) async throws -> CacheEntry<Data>? {
        try await getIfPresent(key).map { CacheEntry(value: $0) }
    }

    func set(_ value: Data, forKey key: String) async throws { try await inner.set(value, forKey: key) }

    func set(_ value: Data, forKey key: String, expiresAt: CacheInstant?) async throws {
        try await inner.set(value, forKey: key, expiresAt: expiresAt)
    }

    func remove(_ key: String) async throws { try await inner.remove(key) }

    /// `levels` composed top to bottom as one stack (a single level over a
    /// level that holds nothing: a stack has two sides).
    static func upperStack(_ levels: [BasicCache<String, Data>]) -> UpperStack {
        guard levels.count > 1 else {
            return levels[0] + BasicCache<String, Data>(name: "none", getIfPresent: { _ in nil }, set: { _, _ in },
                                                         remove: { _ in }, clear: {}, onMemoryWarning: {})
        }
        var top = levels[0]
        for level in levels.dropFirst().dropLast() { top = (top + level).normalize() }
        return top + levels[levels.count - 1]
    }
}
