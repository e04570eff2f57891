/// What a loader found for a key (``ComposedCache/get(_:load:)``): a value
/// to keep for `ttl`, or nothing, remembered for `ttl` (negative caching).
/// A `nil` TTL keeps a value for as long as the levels keep it, and does not
/// remember a miss.
public enum Loaded<Value: Sendable>: Sendable {
    /// The loader found `Value`: stored in the levels, kept for `ttl`.
    case value(Value, ttl: Duration?)
    /// The origin has no value: the miss is remembered for `ttl`, so gets of
    /// the key answer it without loading until then.
    case notFound(ttl: Duration?)
}
