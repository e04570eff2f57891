import DequeModule
import Synchronization

/// The values a fail-safe may answer when the levels below it fail: the
/// last one seen per key, with when it was seen, bounded by count.
///
/// **Never a value known to be replaced.** Keys hash onto shards; each
/// shard counts its changes (a generation). A read takes a ``Ticket`` before
/// it asks the levels and records what it saw only if its shard's generation
/// has not moved since (no write began or ended, nothing was forgotten): a
/// read that overlapped a write may have seen either value, so it records
/// none. A write records its value only if no other write to its shard
/// overlapped it, else forgets the key (the levels may have applied the
/// two in either order). Forgetting is always allowed. One lock per shard,
/// no suspension: a cheaper cousin of ``WriteOrder``, which must also order
/// the levels' writes; here only the record is ordered.
///
/// When full, a shard drops the key it recorded first (FIFO): a fallback
/// needs to be bounded, not clever.
@usableFromInline
final class LastKnownValues<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    @usableFromInline
    struct Known {
        @usableFromInline var value: Value
        @usableFromInline var seenAt: CacheInstant
        /// When it was first stored (its place in ``Shard/order``).
        @usableFromInline var stored: UInt64
        @inlinable init(value: Value, seenAt: CacheInstant, stored: UInt64) {
            self.value = value
            self.seenAt = seenAt
            self.stored = stored
        }
    }

    @usableFromInline
    struct Ticket: Sendable {
        @usableFromInline let shard: Int
        @usableFromInline let generation: UInt64
        @inlinable init(shard: Int, generation: UInt64) {
            self.shard = shard
            self.generation = generation
        }
    }

    @usableFromInline
    struct Shard {
        @usableFromInline var values: [Key: Known] = [:]
        /// Keys in the order stored, with when; an entry whose key was
        /// forgotten or stored again since is skipped (and dropped in bulk).
        @usableFromInline var order = Deque<(key: Key, stored: UInt64)>()
        @usableFromInline var stores: UInt64 = 0
        @usableFromInline var generation: UInt64 = 0
        @usableFromInline var writes = 0

        @usableFromInline init() {}

        @inlinable
        mutating func store(_ value: Value, _ key: Key, at now: CacheInstant, capacity: Int) {
            if let held = values[key]?.stored {
                values[key] = Known(value: value, seenAt: now, stored: held)
                return
            }
            stores &+= 1
            values[key] = Known(value: value, seenAt: now, stored: stores)
            order.append((key, stores))
            while values.count > capacity, let oldest = order.popFirst() {
                if values[oldest.key]?.stored == oldest.stored { values[oldest.key] = nil }
            }
            // Keys forgotten meanwhile leave their place in `order`; drop them in bulk.
            if order.count > 2 * max(values.count, 16) {
                let values = values
                order = Deque(order.filter { values[$0.key]?.stored == $0.stored })
            }
        }

        @inlinable @discardableResult
        mutating func forget(_ key: Key) -> Bool {
            generation &+= 1
            return values.removeValue(forKey: key) != nil
        }
    }

    @usableFromInline
    final class ShardBox: Sendable {
        @usableFromInline let state = Mutex(Shard())
        @usableFromInline init() {}
    }

    @usableFromInline let shards: [ShardBox]
    @usableFromInline let capacityPerShard: Int

    /// At most `capacity` values (rounded up to a multiple of the shard count).
    @usableFromInline init(capacity: Int) {
        let count = 16
        shards = (0..<count).map { _ in ShardBox() }
        capacityPerShard = max(1, (max(capacity, 1) + count - 1) / count)
    }

    @inlinable func shard(of key: Key) -> Int { Int(UInt(bitPattern: key.hashValue) % UInt(shards.count)) }

    /// Taken before a read; `nil` while a write to the key's shard is in flight.
    @inlinable func beginRead(_ key: Key) -> Ticket? {
        let index = shard(of: key)
        return shards[index].state.withLock { shard in
            shard.writes == 0 ? Ticket(shard: index, generation: shard.generation) : nil
        }
    }

    /// What a read found: a value is recorded if nothing changed since
    /// `ticket`; a miss forgets the key (the levels hold none now).
    @inlinable func settle(_ value: Value?, forKey key: Key, ticket: Ticket?, at now: CacheInstant) {
        guard let value else { forget(key); return }
        guard let ticket else { return }
        let capacity = capacityPerShard
        shards[ticket.shard].state.withLock { shard in
            if shard.generation == ticket.generation { shard.store(value, key, at: now, capacity: capacity) }
        }
    }

    /// Taken before a write (set or remove) reaches the levels; pair with ``endWrite(_:forKey:ticket:at:)``.
    func beginWrite(_ key: Key) -> Ticket {
        let index = shard(of: key)
        return shards[index].state.withLock { shard in
            shard.generation &+= 1
            shard.writes += 1
            return Ticket(shard: index, generation: shard.generation)
        }
    }

    /// The write is over: `value` (what the levels now hold for `key`, `nil`
    /// for none or unknown) is recorded if no other write overlapped it;
    /// otherwise the key is forgotten.
    func endWrite(_ value: Value?, forKey key: Key, ticket: Ticket, at now: CacheInstant) {
        let capacity = capacityPerShard
        shards[ticket.shard].state.withLock { shard in
            let alone = shard.generation == ticket.generation && shard.writes == 1
            shard.writes -= 1
            shard.forget(key)
            if alone, let value { shard.store(value, key, at: now, capacity: capacity) }
        }
    }

    @inlinable @discardableResult
    func forget(_ key: Key) -> Bool {
        shards[shard(of: key)].state.withLock { $0.forget(key) }
    }

    func forgetAll() {
        for box in shards {
            box.state.withLock { shard in
                shard.generation &+= 1
                shard.values.removeAll()
                shard.order.removeAll()
            }
        }
    }

    /// The last value seen for `key`, if seen no longer than `maxStale` before `now`.
    func value(forKey key: Key, maxStale: Duration, now: CacheInstant) -> Known? {
        shards[shard(of: key)].state.withLock { shard in
            guard let known = shard.values[key], known.seenAt.advanced(by: maxStale) >= now else { return nil }
            return known
        }
    }

    /// Values held now.
    var count: Int { shards.reduce(0) { total, box in total + box.state.withLock { $0.values.count } } }
}
