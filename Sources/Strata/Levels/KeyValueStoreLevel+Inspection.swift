import Foundation

extension KeyValueStoreLevel: InspectableLevel {
    /// Lists and peeks the domain as read (its soft copy while the file is unchanged).
    package var inspector: LevelInspector<Key, Value>? {
        LevelInspector(keys: { [self] limit in try inspectKeys(limit: limit) }, peek: { [self] key in try peek(key) })
    }

    /// Up to `limit` unexpired keys with their stored size and TTL left (the
    /// domain keeps no write time, hits or frequencies). Throws as a get does
    /// when the file cannot be read.
    package func inspectKeys(limit: Int) throws -> [KeyInspection] {
        guard limit > 0 else { return [] }
        let now = clock.now().nanosecondsSince1970
        return try domain().lazy.filter { !Tombstones.isTombstone($0.key) && !$0.value.isExpired(at: now) }.prefix(limit).map { storageKey, entry in
            KeyInspection(key: Data(base64Encoded: storageKey).map { KeyInspection.text($0) } ?? storageKey,
                          size: entry.value.count,
                          ttlLeft: entry.expiresAt.flatMap { KeyInspection.ttlLeft(expiresAt: $0, now: now) })
        }
    }

    /// The value stored for `key` with its expiry, `nil` if none, expired or
    /// undecodable; nothing is written or removed.
    package func peek(_ key: Key) throws -> PeekedEntry<Value>? {
        guard let entry = try domain()[Self.storageKey(key)],
              !entry.isExpired(at: clock.now().nanosecondsSince1970),
              let value = try? codec.decode(entry.value) else { return nil }
        return PeekedEntry(value: value, expiresAt: entry.expiresAt.map { CacheInstant(nanosecondsSince1970: $0) },
                           size: entry.value.count)
    }
}
