/// A bounded look inside a level for tools (the explorer's key inspector):
/// list keys, peek at a value, find the hottest keys. Nothing it does counts
/// as a use: no statistics, no promotion in the eviction policy, no back-fill
/// (but a Redis server before 7.2 counts its reads in its own LRU/LFU clock:
/// ``PeekedEntry/countedAsAccess``).
///
/// Levels that can be inspected adopt ``InspectableLevel``; wrappers and
/// ``CacheLevel/normalize()`` forward it (``CacheLevel/levelInspector``).
package struct LevelInspector<Key: Sendable, Value: Sendable>: Sendable {
    /// At most `limit` keys, in no promised order, and whether that is all of them.
    package let listing: @Sendable (_ limit: Int) async throws -> KeyListing
    /// The stored value for a key, or `nil` when the level holds none (or only an expired one).
    package let peek: @Sendable (Key) async throws -> PeekedEntry<Value>?
    /// The level's own ranking of its hottest keys over all of them (see
    /// ``hotKeys(_:)``); `nil`: hot keys are ranked among listed ones.
    package let hotRanking: (@Sendable (_ count: Int) async throws -> HotKeys)?

    /// An inspector whose `keys` listing stops only at the limit or the last key.
    package init(keys: @escaping @Sendable (_ limit: Int) async throws -> [KeyInspection],
                 peek: @escaping @Sendable (Key) async throws -> PeekedEntry<Value>?,
                 hottest: (@Sendable (_ count: Int) async throws -> HotKeys)? = nil) {
        self.init(listing: { limit in KeyListing(keys: try await keys(limit), limit: limit) }, peek: peek, hottest: hottest)
    }

    /// An inspector telling itself whether a listing is complete (a bounded `SCAN`).
    package init(listing: @escaping @Sendable (_ limit: Int) async throws -> KeyListing,
                 peek: @escaping @Sendable (Key) async throws -> PeekedEntry<Value>?,
                 hottest: (@Sendable (_ count: Int) async throws -> HotKeys)? = nil) {
        self.listing = listing
        self.peek = peek
        self.hotRanking = hottest
    }

    /// At most `limit` keys, in no promised order.
    package func keys(_ limit: Int) async throws -> [KeyInspection] { try await listing(limit).keys }

    /// Keys a level without a ranking of its own lists for ``hotKeys(_:)``.
    package static var hotKeyScan: Int { 10_000 }

    /// The `count` most requested keys, by the level's frequency estimate,
    /// then hits (ties by key): over the whole level where the level ranks
    /// them itself (``hotRanking``: the memory level), else among the first
    /// ``hotKeyScan`` listed (a sample when the listing is not complete).
    package func hotKeys(_ count: Int) async throws -> HotKeys {
        if let hotRanking { return try await hotRanking(count) }
        return Self.hotKeys(in: try await listing(max(count, Self.hotKeyScan)), count: count)
    }

    /// The `count` hottest keys of `listing`: the whole level's if it is complete.
    package static func hotKeys(in listing: KeyListing, count: Int) -> HotKeys {
        HotKeys(keys: hottest(listing.keys, count: count), examined: listing.keys.count, isWholeLevel: listing.isComplete)
    }

    /// The `count` keys of `keys` with the highest frequency estimate, then hit
    /// count (ties by key); keys with neither, or 0, are none of them.
    package static func hottest(_ keys: [KeyInspection], count: Int) -> [KeyInspection] {
        var heap = TopHeap<KeyInspection>(limit: count, isHigher: KeyInspection.isHotter)
        for key in keys where key.isHot { heap.offer(key) }
        return heap.sorted()
    }

    /// The same inspector with values shown through `transform` (a value
    /// transformer's way out); a value it declines peeks as `nil`.
    package func mapValues<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Key, Value) async throws -> NewValue
    ) -> LevelInspector<Key, NewValue> {
        let peek = self.peek
        return LevelInspector<Key, NewValue>(listing: listing, peek: { key in
            guard let entry = try await peek(key) else { return nil }
            guard let value = try? await transform(key, entry.value) else { return nil }
            return PeekedEntry(value: value, expiresAt: entry.expiresAt, size: entry.size, countedAsAccess: entry.countedAsAccess)
        }, hottest: hotRanking)
    }

    /// The same inspector peeking by keys `transform` maps to this one's
    /// (a key transformer); a key it declines peeks as `nil`.
    package func mapKeys<NewKey: Sendable>(
        _ transform: @escaping @Sendable (NewKey) async throws -> Key
    ) -> LevelInspector<NewKey, Value> {
        let peek = self.peek
        return LevelInspector<NewKey, Value>(listing: listing, peek: { key in
            guard let inner = try? await transform(key) else { return nil }
            return try await peek(inner)
        }, hottest: hotRanking)
    }
}

/// A level that can list its keys and peek at values without counting a use.
package protocol InspectableLevel: CacheLevel {
    /// The level's inspector; `nil` when it has none (an erased level over one that cannot be inspected).
    var inspector: LevelInspector<Key, Value>? { get }
}

extension CacheLevel {
    /// The inspector of this level, found through wrappers (instrumented,
    /// conditioned, capped, pooled, transformed) and ``normalize()``, as
    /// ``levelStatistics`` finds statistics; `nil` when nothing inside can be inspected.
    package var levelInspector: LevelInspector<Key, Value>? { inspectorInside(self) }
}

/// The inspector inside `level`: its own, or its inner level's through a
/// wrapper that keeps key and value types (others adopt ``InspectableLevel``).
func inspectorInside<L: CacheLevel>(_ level: L) -> LevelInspector<L.Key, L.Value>? {
    if let inspectable = level as? any InspectableLevel { return openedInspector(inspectable) as? LevelInspector<L.Key, L.Value> }
    if let wrapper = level as? any WrapperLevel { return innerInspector(of: wrapper) as? LevelInspector<L.Key, L.Value> }
    return nil
}

/// ``inspectorInside(_:)`` as `Any`, for ``CacheLevel/normalize()`` (inlinable) to carry.
@usableFromInline
func erasedInspectorInside<L: CacheLevel>(_ level: L) -> Any? { inspectorInside(level) }

private func openedInspector<L: InspectableLevel>(_ level: L) -> Any? { level.inspector }

private func innerInspector<W: WrapperLevel>(of wrapper: W) -> Any? { inspectorInside(wrapper.inner) }

extension ValueTransformedCache: InspectableLevel {
    /// The inner level's, its values shown as this level's get returns them.
    package var inspector: LevelInspector<Key, NewValue>? { inspectorInside(inner)?.mapValues(forward) }
}

extension KeyTransformedCache: InspectableLevel {
    /// The inner level's, peeking by this level's keys.
    package var inspector: LevelInspector<NewKey, Value>? { inspectorInside(inner)?.mapKeys(transformKey) }
}
