/// What a loader found for a key (``ComposedCache/get(_:load:)``): a value
/// to keep for `ttl`, or nothing, remembered for `ttl` (negative caching).
/// A `nil` TTL keeps a value for as long as the levels keep it, and does not
/// remember a miss.
public enum Loaded<Value: Sendable>: Sendable {
    case value(Value, ttl: Duration?)
    case notFound(ttl: Duration?)
}
