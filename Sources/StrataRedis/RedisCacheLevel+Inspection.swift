import Foundation
import Strata

extension RedisCacheLevel: InspectableLevel {
    /// Lists with `SCAN` (never `KEYS`); peeks with `GET` and `PTTL`. Hot
    /// keys are ranked among a listing (a sample when `SCAN` did not finish),
    /// by Redis's use counter under an LFU policy (none otherwise).
    package var inspector: LevelInspector<Key, Value>? {
        LevelInspector(listing: { [self] limit in try await inspectListing(limit: limit) }, peek: { [self] key in try await peek(key) })
    }

    /// `SCAN` rounds one listing makes at most (each asks for up to ``inspectionScanCount`` names).
    static var inspectionScanRounds: Int { 64 }
    static var inspectionScanCount: Int { 500 }

    /// Up to `limit` of this level's keys (`SCAN` with `MATCH` on the prefix
    /// and `COUNT`, at most ``inspectionScanRounds`` rounds), each with its
    /// size (`STRLEN`: the stored bytes) and TTL left (`PTTL`), asked in one
    /// batch under `CLIENT NO-TOUCH` (see ``RedisClient/sendUntouched(batch:)``:
    /// before Redis 7.2, `STRLEN` counts as an access of each listed key).
    /// Under an LFU `maxmemory-policy` each key's frequency is Redis's use
    /// counter (`OBJECT FREQ`, logarithmic, decaying; asked before `STRLEN`
    /// touches the key), so hot keys rank by it; under any other policy Redis
    /// counts no use and it is `nil`. Redis keeps no write time or hits per
    /// key: those are `nil`. Complete when `SCAN` came back to cursor 0
    /// before the limit: otherwise a sample.
    package func inspectListing(limit: Int) async throws -> KeyListing {
        guard limit > 0 else { return KeyListing(keys: [], isComplete: false) }
        let pattern = RedisKeyLayout.globEscaped(prefix) + [UInt8(ascii: "*")]
        var cursor = "0", names: [[UInt8]] = [], seen = Set<[UInt8]>(), rounds = 0, full = false
        repeat {
            let reply = try await client.send([RedisCommandName.scan, Array(cursor.utf8), RedisCommandName.match, pattern,
                                               RedisCommandName.count, Array(String(Self.inspectionScanCount).utf8)])
            guard case .array(let parts?) = reply, parts.count == 2, let next = parts[0].bytes,
                  case .array(let keys?) = parts[1] else { throw RedisError.protocolError("unexpected SCAN reply") }
            cursor = String(decoding: next, as: UTF8.self)
            // SCAN may return a name twice; keep the first.
            for name in keys.compactMap(\.bytes) where ownsKey(name) && !seen.contains(name) {
                guard names.count < limit else {
                    full = true
                    break
                }
                seen.insert(name)
                names.append(name)
            }
            rounds += 1
        } while cursor != "0" && !full && rounds < Self.inspectionScanRounds
        let isComplete = cursor == "0" && !full
        guard !names.isEmpty else { return KeyListing(keys: [], isComplete: isComplete) }
        let counted = try await countsUse(names[0])
        let perKey = counted ? 3 : 2
        let replies = try await client.sendUntouched(batch: names.flatMap { name in
            (counted ? [[RedisCommandName.object, RedisCommandName.freq, name]] : [])
                + [[RedisCommandName.strlen, name], [RedisCommandName.pttl, name]]
        }).replies
        let keys = names.indices.compactMap { i -> KeyInspection? in
            let reply = replies[(perKey * i)...]
            var frequency: Int?
            if counted, case .integer(let count) = reply.first { frequency = Int(count) }
            guard case .integer(let size) = reply[reply.startIndex + perKey - 2],
                  case .integer(let pttl) = reply[reply.startIndex + perKey - 1],
                  pttl != -2 else { return nil }  // gone since the scan
            let key = keyLayout.keyBytes(names[i], prefix: prefix) ?? names[i]
            return KeyInspection(key: KeyInspection.text(key), size: Int(size),
                                 ttlLeft: pttl >= 0 ? .milliseconds(pttl) : nil, frequency: frequency)
        }
        return KeyListing(keys: keys, isComplete: isComplete)
    }

    /// Whether the server counts each key's use (an LFU policy), asked by
    /// one key's `OBJECT FREQ`: any other policy answers an error.
    private func countsUse(_ name: [UInt8]) async throws -> Bool {
        do {
            if case .integer = try await client.send([RedisCommandName.object, RedisCommandName.freq, name]) { return true }
            return false
        } catch RedisError.server {
            return false
        }
    }

    /// The value Redis holds for `key` with its expiry and size (`GET` and
    /// `PTTL` in one transaction, under `CLIENT NO-TOUCH`); `nil` if none, a
    /// lease or undecodable. Not a get of this level: no statistics, nothing
    /// back-filled, no lease placed. A server without `NO-TOUCH` (before 7.2)
    /// counts the `GET` in the key's LRU/LFU clock: the entry says so
    /// (``PeekedEntry/countedAsAccess``).
    package func peek(_ key: Key) async throws -> PeekedEntry<Value>? {
        let name = redisKey(key)
        let sentAt = clock.now()
        let (replies, untouched) = try await client.sendUntouched(transaction: [[RedisCommandName.get, name], [RedisCommandName.pttl, name]])
        for reply in replies {
            if case .error(let message) = reply { throw RedisError.server(message) }
        }
        guard let bytes = replies[0].bytes, !(leases && RedisLease.isLease(bytes)),
              let value = try? codec.decode(Data(bytes)),
              let entry = try Self.entry(value, pttl: replies[1], sentAt: sentAt) else { return nil }
        return PeekedEntry(value: value, expiresAt: entry.expiresAt, size: bytes.count, countedAsAccess: !untouched)
    }
}
