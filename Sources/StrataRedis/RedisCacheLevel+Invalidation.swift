import Strata

extension RedisCacheLevel {
    /// Subscribes `listener` to changes made in Redis to this level's keys,
    /// by any client (this process included). The first registration (a
    /// composition putting levels above this one does it) opens the
    /// invalidation connection, unless `invalidatesLevelsAbove` is `false`:
    ///
    /// - A dedicated RESP3 connection (`HELLO 3`, named `strata-invalidation`)
    ///   with `CLIENT TRACKING ON BCAST PREFIX <prefix> NOLOOP`: Redis pushes
    ///   the name of every key under the prefix that another client sets,
    ///   deletes, expires or evicts, and a null for `FLUSHDB`/`FLUSHALL`. They
    ///   are published as `.key(k)` (keys of a level whose prefix extends this
    ///   one are skipped) and `.all`.
    /// - This process's own writes: while subscribed, the level sends its
    ///   writes on that connection, so Redis does not report them back
    ///   (`NOLOOP`) and the composition that wrote keeps what it wrote. The
    ///   level reports each of its writes to its listeners itself, right after
    ///   it (a `CacheChange` whose `isLocalWrite` is true): every
    ///   other composition over it in this process drops the key; the writing
    ///   one skips it (`CacheWriteOrigin`). A back-fill into Redis is a
    ///   script, and Redis counts a script's writes as the script's, not the
    ///   connection's: Redis reports those back, and the level recognises
    ///   them (`RedisScriptEchoes`).
    /// - When the connection drops (or misses a health-check `PING`),
    ///   `.contactLost` is published, since changes may be missed; it
    ///   reconnects with a backoff, subscribes again and publishes `.all`.
    /// - A key that cannot be rebuilt from its bytes (a key type not
    ///   ``RedisKeyDecodable``) is published as `.all`.
    /// - Needs Redis 6 or later (RESP3); with an older server nothing is
    ///   reported (``invalidationError`` says why).
    public func subscribe(_ listener: @escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription {
        let subscription = listeners.add(listener)
        subscriber?.start()
        clusterInvalidation?.start()
        return subscription
    }

    /// Keys reported changed by Redis and published to the levels above.
    public var invalidationsReceived: Int { invalidationCounts.invalidationsReceived }

    /// Times the levels above were told to drop everything (`.all` or
    /// `.contactLost`): a `FLUSHDB`/`FLUSHALL`, a lost invalidation
    /// connection, a resubscription.
    public var nearCacheFlushes: Int { invalidationCounts.nearCacheFlushes }

    /// Whether the invalidation connection is subscribed now.
    public var isReceivingInvalidations: Bool { subscriber?.isReady ?? clusterInvalidation?.isReady ?? false }

    /// How many times the invalidation connection subscribed (1 + reconnections).
    public var invalidationSubscriptions: Int { subscriber?.subscriptions ?? clusterInvalidation?.subscriptions ?? 0 }

    /// Why the invalidation connection last failed or closed, if it did.
    public var invalidationError: String? { subscriber?.lastError ?? clusterInvalidation?.lastError }

    /// Rebuilds a key from its bytes when `Key` is ``RedisKeyDecodable``.
    static func keyDecoder() -> @Sendable ([UInt8]) -> Key? {
        guard let decodable = Key.self as? any RedisKeyDecodable.Type else { return { _ in nil } }
        return { bytes in
            guard let key = decodable.init(cacheKeyBytes: bytes) as? Key, key.cacheKeyBytes == bytes else { return nil }
            return key
        }
    }
}

