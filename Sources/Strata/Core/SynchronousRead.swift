/// The reads of a level that answer a hit without suspending
/// (``CacheLevel/synchronousRead``).
///
/// `nil` from either means "not answered here", not "absent": the caller
/// then asks the level's `async` read, which decides between a miss, a
/// lower level and a failure; unless the level's
/// ``CacheLevel/synchronousReadIsComplete`` (a memory level), when `nil` is
/// the miss itself. So a memory level's hit and miss are one look-up through
/// an erased level; a composition's miss at the top goes on below.
public struct SynchronousRead<Key: Sendable, Value: Sendable>: Sendable {
    /// The value for a key, or `nil` when this read does not answer.
    public let value: @Sendable (Key) -> Value?
    /// The entry (value and expiry) for a key, or `nil` when this read does not answer.
    public let entry: @Sendable (Key) -> CacheEntry<Value>?

    /// Reads from two closures, which must agree: `value` answers when `entry` does, with its value.
    @inlinable
    public init(value: @escaping @Sendable (Key) -> Value?, entry: @escaping @Sendable (Key) -> CacheEntry<Value>?) {
        self.value = value
        self.entry = entry
    }
}
