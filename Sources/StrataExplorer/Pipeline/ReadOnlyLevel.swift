import Strata

/// A level `strata --readonly` only reads: a shared store (a production
/// Redis, a disk directory of its own) that the explorer must not change.
/// Reads pass through (a batch as one); a back-fill or refresh is declined
/// (``BackfillDeclined``: the composition writes nothing there and stops);
/// a set or remove throws ``ReadOnlyRefusal``; clear, a memory warning and
/// an invalidation from below do nothing.
struct ReadOnlyLevel<Inner: CacheLevel>: PassThroughLevel {
    typealias Key = Inner.Key
    typealias Value = Inner.Value

    let inner: Inner

    init(_ inner: Inner) { self.inner = inner }

    func set(_ value: Value, forKey key: Key) async throws { throw ReadOnlyRefusal(level: inner.name) }

    func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws { throw ReadOnlyRefusal(level: inner.name) }

    func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws { throw BackfillDeclined() }

    func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws { throw BackfillDeclined() }

    func remove(_ key: Key) async throws { throw ReadOnlyRefusal(level: inner.name) }

    func invalidate(_ invalidation: CacheInvalidation<Key>) async throws {}

    func clear() async {}

    func onMemoryWarning() async {}

    func lostCoherence() {}
}

/// A write that reached a level `strata --readonly` only reads.
struct ReadOnlyRefusal: Error, CustomStringConvertible {
    let level: String
    var description: String { "read-only: \(level) is not written (strata --readonly)" }
}
