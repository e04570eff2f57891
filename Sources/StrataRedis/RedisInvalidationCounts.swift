import Synchronization

/// What a ``RedisCacheLevel``'s invalidation connection has reported.
final class RedisInvalidationCounts: Sendable {
    private let keys = Atomic<Int>(0)
    private let flushes = Atomic<Int>(0)

    var invalidationsReceived: Int { keys.load(ordering: .relaxed) }
    var nearCacheFlushes: Int { flushes.load(ordering: .relaxed) }

    func received() { keys.add(1, ordering: .relaxed) }
    func flushed() { flushes.add(1, ordering: .relaxed) }
}
