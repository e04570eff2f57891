/// Errors of batch operations.
public enum BatchError: Error, Equatable, Sendable {
    /// `set(values, forKey: keys)` got a different number of values and keys.
    case countMismatch(values: Int, keys: Int)
}

extension CacheLevel where Key: Hashable {
    /// The hits among `keys`. Misses and failures are left out; it never throws
    /// for them. At most `maxConcurrency` gets run at once (unbounded if `nil`).
    /// Duplicate keys are fetched once. Built on
    /// ``CacheLevel/entries(forKeys:maxConcurrency:)``, so a Redis level answers
    /// with one `MGET`, and `memory + redis + db` asks Redis only for the keys
    /// memory lacks and the database only for those Redis lacks.
    public func batchGetSome(_ keys: [Key], maxConcurrency: Int? = nil) async -> [Key: Value] {
        var seen = Set<Key>()
        let unique = keys.filter { seen.insert($0).inserted }
        let found = await entries(forKeys: unique, maxConcurrency: maxConcurrency)
        var results: [Key: Value] = [:]
        for (key, entry) in zip(unique, found) {
            if let entry { results[key] = entry.value }
        }
        return results
    }
}

/// Runs `read` for every key, at most `maxConcurrency` at once, and returns the
/// results in key order.
func concurrentEntries<Key: Sendable, Value: Sendable>(
    _ keys: [Key], maxConcurrency: Int?,
    _ read: @escaping @Sendable (Key) async -> CacheEntry<Value>?
) async -> [CacheEntry<Value>?] {
    if keys.isEmpty { return [] }
    if keys.count == 1 { return [await read(keys[0])] }
    let limit = max(1, maxConcurrency ?? keys.count)
    return await withTaskGroup(of: (Int, CacheEntry<Value>?).self) { group in
        var results = [CacheEntry<Value>?](repeating: nil, count: keys.count)
        var next = 0
        func addNext() {
            guard next < keys.count else { return }
            let index = next
            next += 1
            group.addTask { (index, await read(keys[index])) }
        }
        for _ in 0..<min(limit, keys.count) { addNext() }
        while let (index, entry) = await group.next() {
            results[index] = entry
            addNext()
        }
        return results
    }
}

/// A level over sequences of keys: get returns the values **in key order**; the
/// batch is a miss as soon as one key misses, and fails as soon as one key
/// fails, cancelling the others either way.
///
/// **Not back-filled.** In a composition of batch levels
/// (`upper.allBatch() + lower.allBatch()`) a back-fill of `[1, 2]` would
/// write each element, but the composition orders writes and back-fills by
/// the whole array: a `remove([1])` or `set(_, [1])` made while `[1, 2]` was
/// read below would not stop it, and the older element would come back
/// above. So a back-fill is declined here (``BackfillDeclined``): a batch
/// read answers from below, and nothing is written above. To have batches
/// back-fill, compose single-key levels and read them with
/// ``CacheLevel/batchGetSome(_:maxConcurrency:)`` or `entries(forKeys:)`,
/// which order each key on its own.
public struct AllBatchCache<Inner: CacheLevel>: WrapperLevel {
    /// A batch: the inner level's keys, in order.
    public typealias Key = [Inner.Key]
    /// The inner level's values, one for each key of the batch, in the same order.
    public typealias Value = [Inner.Value]

    public let inner: Inner
    /// At most this many inner reads or writes of one batch run at once (`nil`: all of them).
    public let maxConcurrency: Int?

    /// `inner` over batches of keys, at most `maxConcurrency` of a batch's keys at once.
    public init(_ inner: Inner, maxConcurrency: Int? = nil) {
        self.inner = inner
        self.maxConcurrency = maxConcurrency
    }

    /// A changed key may be in any batch: reported as ``CacheInvalidation/all``.
    public func subscribe(_ listener: @escaping @Sendable (CacheChange<[Inner.Key]>) async -> Void) -> CacheSubscription {
        inner.subscribe { await listener($0.withoutKey()) }
    }

    public func getIfPresent(_ keys: [Inner.Key]) async throws -> [Inner.Value]? {
        do {
            return try await forEachKey(keys) { index in
                guard let value = try await inner.getIfPresent(keys[index]) else { throw FetchError.valueNotInCache }
                return (index, value)
            }
        } catch FetchError.valueNotInCache {
            return nil
        }
    }

    /// The values with the earliest of their expiries: a batch is only as
    /// fresh as its shortest-lived part, and a level above that back-fills it
    /// must not keep it longer.
    public func entry(forKey keys: [Inner.Key]) async throws -> CacheEntry<[Inner.Value]>? {
        do {
            let entries = try await forEachKey(keys) { index in
                guard let entry = try await inner.entry(forKey: keys[index]) else { throw FetchError.valueNotInCache }
                return (index, entry)
            }
            return CacheEntry(value: entries.map(\.value), expiresAt: entries.compactMap(\.expiresAt).min())
        } catch FetchError.valueNotInCache {
            return nil
        }
    }

    /// Declined: a batch's keys are back-filled one by one below it.
    public func backfill(_ fill: Backfill<[Inner.Value]>, forKey keys: [Inner.Key]) async throws {
        throw BackfillDeclined()
    }

    public func set(_ values: [Inner.Value], forKey keys: [Inner.Key]) async throws {
        try await set(values, forKey: keys, expiresAt: nil)
    }

    /// Stores each value under its key with `expiresAt` (`nil`: each level's
    /// default). A back-fill is declined (see the notes above).
    public func set(_ values: [Inner.Value], forKey keys: [Inner.Key], expiresAt: CacheInstant?) async throws {
        guard values.count == keys.count else { throw BatchError.countMismatch(values: values.count, keys: keys.count) }
        _ = try await forEachKey(keys) { index -> (Int, Void) in
            if let expiresAt {
                try await inner.set(values[index], forKey: keys[index], expiresAt: expiresAt)
            } else {
                try await inner.set(values[index], forKey: keys[index])
            }
            return (index, ())
        }
    }

    public func remove(_ keys: [Inner.Key]) async throws {
        _ = try await forEachKey(keys) { index -> (Int, Void) in
            try await inner.remove(keys[index])
            return (index, ())
        }
    }

    /// Runs `operation` for every index with bounded concurrency; results come
    /// back in index order; the first error cancels the rest and is thrown.
    private func forEachKey<T: Sendable>(
        _ keys: [Inner.Key],
        _ operation: @escaping @Sendable (Int) async throws -> (Int, T)
    ) async throws -> [T] {
        let limit = max(1, maxConcurrency ?? keys.count)
        return try await withThrowingTaskGroup(of: (Int, T).self) { group in
            var results = [T?](repeating: nil, count: keys.count)
            var nextIndex = 0
            func addNext() {
                guard nextIndex < keys.count else { return }
                let index = nextIndex
                nextIndex += 1
                group.addTask { try await operation(index) }
            }
            for _ in 0..<min(limit, keys.count) { addNext() }
            while let (index, value) = try await group.next() {
                results[index] = value
                addNext()
            }
            return results.map { $0! }
        }
    }
}

extension CacheLevel {
    /// This level over arrays of keys: see ``AllBatchCache``.
    public func allBatch(maxConcurrency: Int? = nil) -> AllBatchCache<Self> {
        AllBatchCache(self, maxConcurrency: maxConcurrency)
    }
}
