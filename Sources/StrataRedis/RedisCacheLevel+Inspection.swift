import Foundation
import Strata

extension RedisCacheLevel: InspectableLevel {
    /// Lists with `SCAN` (never `KEYS`); peeks with `GET` and `PTTL`.
    package var inspector: LevelInspector<Key, Value>? {
        LevelInspector(keys: { [self] limit in try await inspectKeys(limit: limit) }, peek: { [self] key in try await peek(key) })
    }

    /// `SCAN` rounds one listing makes at most (each asks for up to ``inspectionScanCount`` names).
    static var inspectionScanRounds: Int { 64 }
    static var inspectionScanCount: Int { 500 }

    /// Up to `limit` of this level's keys (`SCAN` with `MATCH` on the prefix
    /// and `COUNT`, at most ``inspectionScanRounds`` rounds), each with its
    /// size (`STRLEN`: the stored bytes) and TTL left (`PTTL`), asked in one
    /// batch. Redis keeps no write time, hits or frequency per key that it
    /// gives without an LFU policy: those are `nil`.
    package func inspectKeys(limit: Int) async throws -> [KeyInspection] {
        guard limit > 0 else { return [] }
        let pattern = RedisKeyLayout.globEscaped(prefix) + [UInt8(ascii: "*")]
        var cursor = "0", names: [[UInt8]] = [], seen = Set<[UInt8]>(), rounds = 0
        repeat {
            let reply = try await client.send([RedisCommandName.scan, Array(cursor.utf8), RedisCommandName.match, pattern,
                                               RedisCommandName.count, Array(String(Self.inspectionScanCount).utf8)])
            guard case .array(let parts?) = reply, parts.count == 2, let next = parts[0].bytes,
                  case .array(let keys?) = parts[1] else { throw RedisError.protocolError("unexpected SCAN reply") }
            cursor = String(decoding: next, as: UTF8.self)
            // SCAN may return a name twice; keep the first.
            for name in keys.compactMap(\.bytes) where names.count < limit && ownsKey(name) && seen.insert(name).inserted {
                names.append(name)
            }
            rounds += 1
        } while cursor != "0" && names.count < limit && rounds < Self.inspectionScanRounds
        guard !names.isEmpty else { return [] }
        let replies = try await client.send(batch: names.flatMap { [[RedisCommandName.strlen, $0], [RedisCommandName.pttl, $0]] })
        return names.indices.compactMap { i in
            guard case .integer(let size) = replies[2 * i], case .integer(let pttl) = replies[2 * i + 1],
                  pttl != -2 else { return nil }  // gone since the scan
            let key = keyLayout.keyBytes(names[i], prefix: prefix) ?? names[i]
            return KeyInspection(key: KeyInspection.text(key), size: Int(size),
                                 ttlLeft: pttl >= 0 ? .milliseconds(pttl) : nil)
        }
    }

    /// The value Redis holds for `key` with its expiry and size (`GET` and
    /// `PTTL` in one transaction); `nil` if none, a lease or undecodable.
    /// Not a get of this level: no statistics, nothing back-filled, no lease
    /// placed (Redis itself may still count the access in its own LRU clock).
    package func peek(_ key: Key) async throws -> PeekedEntry<Value>? {
        let name = redisKey(key)
        let sentAt = clock.now()
        let replies = try await client.send(transaction: [[RedisCommandName.get, name], [RedisCommandName.pttl, name]])
        for reply in replies {
            if case .error(let message) = reply { throw RedisError.server(message) }
        }
        guard let bytes = replies[0].bytes, !(leases && RedisLease.isLease(bytes)),
              let value = try? codec.decode(Data(bytes)),
              let entry = try Self.entry(value, pttl: replies[1], sentAt: sentAt) else { return nil }
        return PeekedEntry(value: value, expiresAt: entry.expiresAt, size: bytes.count)
    }
}
