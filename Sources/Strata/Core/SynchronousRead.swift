/// The reads of a level that answer a hit without suspending
/// (``CacheLevel/synchronousRead``).
///
/// `nil` from either means "not answered here", not "absent": the caller
/// then asks the level's `async` read, which decides between a miss, a
/// lower level and a failure. So a memory level's miss is looked up twice
/// through an erased level, and its hit once.
public struct SynchronousRead<Key: Sendable, Value: Sendable>: Sendable {
    /// The value for a key, or `nil` when this read does not answer.
    public let value: @Sendable (Key) -> Value?
    /// The entry (value and expiry) for a key, or `nil` when this read does not answer.
    public let entry: @Sendable (Key) -> CacheEntry<Value>?

    @inlinable
    public init(value: @escaping @Sendable (Key) -> Value?, entry: @escaping @Sendable (Key) -> CacheEntry<Value>?) {
        self.value = value
        self.entry = entry
    }
}
