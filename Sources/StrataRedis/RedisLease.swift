/// What closes the cache-aside race with writers that are not Strata, when a
/// ``RedisCacheLevel`` is created with `leases: true` (memcache's leases).
///
/// The race: a read misses in Redis and reads the origin's old value; the
/// origin changes, and its writer deletes the key in Redis (`DEL`), which was
/// absent, so Redis changes nothing and reports nothing; the read's back-fill
/// then stores the old value, for good. No check at back-fill time can see a
/// `DEL` of an absent key. So on a miss the level leaves a **lease** in the
/// key (`SET NX PX`, a value no codec produces: ``marker`` and a random
/// token) before the get returns, that is before the origin is read; the
/// writer's `DEL` then deletes the lease, and the back-fill stores its value
/// only if the key still holds the lease its read saw (a script). A lease
/// reads as a miss everywhere in the level, and lasts ``lifetime``. Which
/// lease a back-fill relies on is kept in the level's ``RedisMissBook``.
enum RedisLease {
    /// The first bytes of every lease (a NUL first: no text, JSON or
    /// property-list value starts so).
    static let marker: [UInt8] = Array("\u{0}strata-lease:".utf8)

    /// How long a lease stays in Redis: a back-fill of a read that began
    /// longer ago finds it gone and is declined.
    static var lifetime: Duration { .seconds(60) }

    /// A fresh lease value.
    static func newLease() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        return marker + (0..<32).map { _ in digits[Int(generator.next() % 16)] }
    }

    /// Whether a value read from Redis is a lease.
    static func isLease(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.count > marker.count && bytes.starts(with: marker)
    }
}
