/// A bounded look inside a level for tools (the explorer's key inspector):
/// list keys, peek at a value, find the hottest keys. Nothing it does counts
/// as a use: no statistics, no promotion in the eviction policy, no back-fill.
///
/// Levels that can be inspected adopt ``InspectableLevel``; wrappers and
/// ``CacheLevel/normalize()`` forward it (``CacheLevel/levelInspector``).
package struct LevelInspector<Key: Sendable, Value: Sendable>: Sendable {
    /// At most `limit` keys, in no promised order.
    package let keys: @Sendable (_ limit: Int) async throws -> [KeyInspection]
    /// The stored value for a key, or `nil` when the level holds none (or only an expired one).
    package let peek: @Sendable (Key) async throws -> PeekedEntry<Value>?

    package init(keys: @escaping @Sendable (_ limit: Int) async throws -> [KeyInspection],
                 peek: @escaping @Sendable (Key) async throws -> PeekedEntry<Value>?) {
        self.keys = keys
        self.peek = peek
    }

    /// Keys looked at by ``hotKeys(_:scanning:)`` by default.
    package static var hotKeyScan: Int { 10_000 }

    /// The `count` most requested keys among the first `scanning` listed, by
    /// the level's frequency estimate or hit count (ties by key).
    package func hotKeys(_ count: Int, scanning: Int = hotKeyScan) async throws -> [KeyInspection] {
        Self.hottest(try await keys(max(count, scanning)), count: count)
    }

    /// The `count` keys of `keys` with the highest frequency estimate or hit
    /// count (ties by key); keys with neither, or 0, are none of them.
    package static func hottest(_ keys: [KeyInspection], count: Int) -> [KeyInspection] {
        Array(keys.filter { ($0.frequency ?? $0.hits ?? 0) > 0 }.sorted {
            let (a, b) = ($0.frequency ?? $0.hits ?? 0, $1.frequency ?? $1.hits ?? 0)
            return a != b ? a > b : $0.key < $1.key
        }.prefix(count))
    }

    /// The same inspector with values shown through `transform` (a value
    /// transformer's way out); a value it declines peeks as `nil`.
    package func mapValues<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Key, Value) async throws -> NewValue
    ) -> LevelInspector<Key, NewValue> {
        let peek = self.peek
        return LevelInspector<Key, NewValue>(keys: keys) { key in
            guard let entry = try await peek(key) else { return nil }
            guard let value = try? await transform(key, entry.value) else { return nil }
            return PeekedEntry(value: value, expiresAt: entry.expiresAt, size: entry.size)
        }
    }

    /// The same inspector peeking by keys `transform` maps to this one's
    /// (a key transformer); a key it declines peeks as `nil`.
    package func mapKeys<NewKey: Sendable>(
        _ transform: @escaping @Sendable (NewKey) async throws -> Key
    ) -> LevelInspector<NewKey, Value> {
        let peek = self.peek
        return LevelInspector<NewKey, Value>(keys: keys) { key in
            guard let inner = try? await transform(key) else { return nil }
            return try await peek(inner)
        }
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
