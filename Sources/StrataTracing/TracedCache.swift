import Strata
import Tracing

/// A level whose operations each open a span (swift-distributed-tracing):
/// wrap each level of a stack to see which levels a request touched, how
/// long each took, hits and misses, and errors.
///
/// Off by default and free when off: only wrapped levels trace, and a level
/// that is not wrapped pays nothing. Spans are named `"<level> get"`,
/// `"<level> set"`, `"<level> back-fill"`, … and carry `cache.level`,
/// `cache.operation`, `cache.hit` (gets) and, with `recordKeys`, `cache.key`
/// (keys may be personal data: off by default). Errors are recorded on the
/// span; a miss is no error. A stack's background back-fills are spans of
/// their own, children of the request's span while it is in scope.
public struct TracedCache<Inner: CacheLevel>: WrapperLevel {
    public typealias Key = Inner.Key
    public typealias Value = Inner.Value

    public let inner: Inner
    /// Where spans go (by default the bootstrapped `InstrumentationSystem.tracer`).
    public let tracer: any Tracer
    public let recordKeys: Bool

    public init(_ inner: Inner, tracer: any Tracer = InstrumentationSystem.tracer, recordKeys: Bool = false) {
        self.inner = inner
        self.tracer = tracer
        self.recordKeys = recordKeys
    }

    /// Runs `body` in a span for `operation` on `key`.
    func traced<T>(_ operation: String, key: Key?, _ body: (any Span) async throws -> T) async throws -> T {
        let span = tracer.startAnySpan("\(inner.name) \(operation)", context: .current ?? .topLevel, ofKind: .internal)
        span.attributes["cache.level"] = inner.name
        span.attributes["cache.operation"] = operation
        if recordKeys, let key { span.attributes["cache.key"] = String(describing: key) }
        defer { span.end() }
        do {
            return try await ServiceContext.withValue(span.context) { try await body(span) }
        } catch {
            span.recordError(error)
            throw error
        }
    }

    public func getIfPresent(_ key: Key) async throws -> Value? {
        try await traced("get", key: key) { span in
            let value = try await inner.getIfPresent(key)
            span.attributes["cache.hit"] = value != nil
            return value
        }
    }

    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await traced("get", key: key) { span in
            let entry = try await inner.entry(forKey: key)
            span.attributes["cache.hit"] = entry != nil
            return entry
        }
    }

    public func set(_ value: Value, forKey key: Key) async throws {
        try await traced("set", key: key) { _ in try await inner.set(value, forKey: key) }
    }

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await traced("set", key: key) { _ in try await inner.set(value, forKey: key, expiresAt: expiresAt) }
    }

    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try await traced("back-fill", key: key) { _ in try await inner.backfill(fill, forKey: key) }
    }

    public func remove(_ key: Key) async throws {
        try await traced("remove", key: key) { _ in try await inner.remove(key) }
    }

    public func clear() async {
        _ = try? await traced("clear", key: nil) { _ in await inner.clear() }
    }
}

extension CacheLevel {
    /// This level with a span per operation (see ``TracedCache``).
    public func traced(tracer: any Tracer = InstrumentationSystem.tracer, recordKeys: Bool = false) -> TracedCache<Self> {
        TracedCache(self, tracer: tracer, recordKeys: recordKeys)
    }
}
