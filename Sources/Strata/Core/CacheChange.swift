/// What a level tells its subscribers (``CacheLevel/subscribe(_:)``): a
/// change to its store, and whether it reports a write this process made
/// through the level (a shared store tells every stack over it in the
/// process of its own writes; the stacks the write passed through skip it,
/// see "Writers" in the design note of `StackCoordinator`, the object a stack keeps its levels coherent with).
public struct CacheChange<Key: Sendable>: Sendable {
    /// What changed.
    public let invalidation: CacheInvalidation<Key>
    /// For a report of this process's own write, the stacks it passed
    /// through (empty for a write that failed in a way that may have changed
    /// the store: every stack drops what it took); `nil` for a change made
    /// by another client.
    let writeOrigin: CacheWriteOrigin?

    /// A change made by someone else: another process, another client of a
    /// shared store.
    public init(_ invalidation: CacheInvalidation<Key>) {
        self.invalidation = invalidation
        self.writeOrigin = nil
    }

    /// The level's report of its own write, made through the stacks in `origin`.
    package init(_ invalidation: CacheInvalidation<Key>, reportingWriteBy origin: CacheWriteOrigin) {
        self.invalidation = invalidation
        self.writeOrigin = origin
    }

    /// Whether this reports a write made in this process through the level,
    /// not a change another client made.
    public var isLocalWrite: Bool { writeOrigin != nil }

    /// Whether this reports a write the stack with id `writer` is part of.
    func isWrite(by writer: UInt64) -> Bool { writeOrigin?.contains(writer) ?? false }

    /// This change for a level whose keys cannot be named from these ones
    /// (``CacheInvalidation/all`` or ``CacheInvalidation/contactLost``), from the same writer.
    func withoutKey<Other>() -> CacheChange<Other> {
        if let writeOrigin { CacheChange<Other>(invalidation.withoutKey(), reportingWriteBy: writeOrigin) }
        else { CacheChange<Other>(invalidation.withoutKey()) }
    }
}

extension CacheChange: Equatable where Key: Equatable {
    /// The same change, reported for the same writers.
    public static func == (a: Self, b: Self) -> Bool {
        a.invalidation == b.invalidation && a.writeOrigin?.writers == b.writeOrigin?.writers
    }
}
