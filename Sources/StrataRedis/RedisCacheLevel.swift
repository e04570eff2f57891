import Foundation
import Strata
import Synchronization

/// A shared level on Redis: keys live under `prefix`, values go through a
/// ``CacheCodec`` (the disk level's codecs), with an optional TTL per level
/// or per set.
///
/// - The initialiser does not connect; a malformed URL throws
///   ``RedisError/invalidURL(_:)``. Connection problems surface per request as
///   ``RedisError``, so an application starts while Redis is down, and in a
///   composed cache a Redis outage makes gets fall through to the next level.
/// - `batchGetSome` is one `MGET`; `clear()` deletes only this prefix
///   (`SCAN MATCH prefix*` + `UNLINK`), never `FLUSHDB`.
/// - A value that does not decode is a miss, counted (``decodeFailures``), and
///   left for whoever wrote it.
/// - Keys and prefixes are binary-safe (spaces, newlines, any bytes).
/// - Prefixes never overlap: an empty prefix throws
///   ``RedisError/invalidPrefix(_:)``; a prefix not ending in `:` gets one
///   (`app` is stored as `app:`); and in a key, `%` and `:` are stored as
///   `%25` and `%3A`, so the Redis key is `prefix + escaped key` with no `:`
///   after the prefix. Levels `app:` and `app:x:` therefore never share a key,
///   and `clear()` of `app:` leaves `app:x:` alone.
public final class RedisCacheLevel<Key: CacheKeyConvertible, Value: Sendable>: ExpirableCacheLevel {
    public let client: RedisClient
    /// The prefix as stored: the one given, with a `:` appended unless it ends in one.
    public let prefix: [UInt8]
    public let codec: CacheCodec<Value>
    public let name: String
    public let clock: any CacheClock = SystemClock()
    let defaultTTL: Duration?
    private let decodeFailureCount = Atomic<Int>(0)

    public init(url: String, prefix: String, codec: CacheCodec<Value>, defaultTTL: Duration? = nil,
                connections: Int = 2, commandTimeout: Duration = .seconds(2), name: String = "redis") throws {
        let configuration = try RedisConfiguration(url: url, connections: connections, commandTimeout: commandTimeout)
        self.prefix = try Self.normalizedPrefix(prefix)
        self.client = RedisClient(configuration: configuration)
        self.codec = codec
        self.defaultTTL = defaultTTL
        self.name = name
    }

    /// Values that did not decode with this level's codec.
    public var decodeFailures: Int { decodeFailureCount.load(ordering: .relaxed) }

    private static var separator: UInt8 { UInt8(ascii: ":") }

    /// `prefix` ending in the separator; an empty prefix would make `clear()`
    /// delete every key of the database, so it throws.
    static func normalizedPrefix(_ prefix: String) throws -> [UInt8] {
        guard !prefix.isEmpty else {
            throw RedisError.invalidPrefix("empty (clear() would delete the whole database); use e.g. \"app:\"")
        }
        var bytes = Array(prefix.utf8)
        if bytes.last != separator { bytes.append(separator) }
        return bytes
    }

    /// The key's bytes with `%` and `:` percent-escaped, so they hold no separator.
    static func escapedKey(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(where: { $0 == separator || $0 == UInt8(ascii: "%") }) else { return bytes }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(bytes.count + 8)
        for byte in bytes {
            switch byte {
            case separator: escaped += Array("%3A".utf8)
            case UInt8(ascii: "%"): escaped += Array("%25".utf8)
            default: escaped.append(byte)
            }
        }
        return escaped
    }

    func redisKey(_ key: Key) -> [UInt8] { prefix + Self.escapedKey(key.cacheKeyBytes) }

    /// Whether `name` is one of this level's keys, not one of a level whose
    /// prefix extends this one (`app:x:` under `app:`).
    func ownsKey(_ name: [UInt8]) -> Bool {
        name.starts(with: prefix) && !name[prefix.count...].contains(Self.separator)
    }

    func decode(_ reply: RESPValue) throws -> Value? {
        switch reply {
        case .bulkString(nil): return nil
        case .bulkString(let buffer?):
            do { return try codec.decode(Data(buffer.readableBytesView)) } catch {
                decodeFailureCount.add(1, ordering: .relaxed)
                return nil
            }
        default: throw RedisError.protocolError("unexpected reply \(reply)")
        }
    }

    public func get(_ key: Key) async throws -> Value {
        guard let value = try await getIfPresent(key) else { throw FetchError.valueNotInCache }
        return value
    }

    public func getIfPresent(_ key: Key) async throws -> Value? {
        try await decode(client.send([Array("GET".utf8), redisKey(key)]))
    }

    public func set(_ value: Value, forKey key: Key) async throws {
        try await set(value, forKey: key, expiresAt: nil)
    }

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        let encoded = try codec.encoded(value)
        var arguments = [Array("SET".utf8), redisKey(key), Array(encoded)]
        let now = clock.now()
        if let deadline = expiresAt ?? defaultTTL.map({ now.advanced(by: $0) }) {
            let milliseconds = max(1, (deadline.nanosecondsSince1970 - now.nanosecondsSince1970) / 1_000_000)
            arguments += [Array("PX".utf8), Array(String(milliseconds).utf8)]
        }
        _ = try await client.send(arguments)
    }

    public func remove(_ key: Key) async throws {
        _ = try await client.send([Array("DEL".utf8), redisKey(key)])
    }

    /// Deletes every key of this level (and nothing else: not the keys of a
    /// level whose prefix extends this one).
    public func clear() async { _ = try? await clearPrefix() }

    /// Like ``clear()`` but reports failures; returns how many keys went.
    @discardableResult
    public func clearPrefix() async throws -> Int {
        var cursor = "0"
        var removed = 0
        let pattern = Self.globEscaped(prefix) + [UInt8(ascii: "*")]
        repeat {
            let reply = try await client.send([Array("SCAN".utf8), Array(cursor.utf8), Array("MATCH".utf8), pattern,
                                               Array("COUNT".utf8), Array("1000".utf8)])
            guard case .array(let parts?) = reply, parts.count == 2, let next = parts[0].bytes,
                  case .array(let keys?) = parts[1] else { throw RedisError.protocolError("unexpected SCAN reply") }
            cursor = String(decoding: next, as: UTF8.self)
            let names = keys.compactMap(\.bytes).filter(ownsKey)
            if !names.isEmpty {
                _ = try await client.send([Array("UNLINK".utf8)] + names)
                removed += names.count
            }
        } while cursor != "0"
        return removed
    }

    /// A glob pattern matching `bytes` literally.
    static func globEscaped(_ bytes: [UInt8]) -> [UInt8] {
        bytes.flatMap { byte in
            [UInt8(ascii: "*"), UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "\\")].contains(byte)
                ? [UInt8(ascii: "\\"), byte] : [byte]
        }
    }

    /// Redis keeps these entries; memory warnings do not concern it.
    public func onMemoryWarning() async {}

    /// Redis expires entries itself.
    @discardableResult public func removeExpired() async -> Int { 0 }

    /// Whether `key` exists (EXISTS).
    public func contains(_ key: Key) async throws -> Bool {
        guard case .integer(let count) = try await client.send([Array("EXISTS".utf8), redisKey(key)]) else {
            throw RedisError.protocolError("unexpected EXISTS reply")
        }
        return count > 0
    }

    /// PING.
    public func ping() async throws {
        guard case .simpleString("PONG") = try await client.send("PING") else { throw RedisError.protocolError("no PONG") }
    }

    public func shutdown() async { await client.shutdown() }
}

extension RedisCacheLevel where Key: Hashable {
    /// The hits among `keys`, fetched with one `MGET`. Never throws: a failure
    /// (Redis down) returns no hits.
    public func batchGetSome(_ keys: [Key], maxConcurrency: Int? = nil) async -> [Key: Value] {
        var seen = Set<Key>()
        let unique = keys.filter { seen.insert($0).inserted }
        guard !unique.isEmpty,
              case .array(let values?)? = try? await client.send([Array("MGET".utf8)] + unique.map(redisKey)),
              values.count == unique.count else { return [:] }
        var result: [Key: Value] = [:]
        for (key, reply) in zip(unique, values) {
            if let value = try? decode(reply) { result[key] = value }
        }
        return result
    }
}

extension RedisCacheLevel where Value == Data {
    public convenience init(url: String, prefix: String, defaultTTL: Duration? = nil, connections: Int = 2,
                            commandTimeout: Duration = .seconds(2)) throws {
        try self.init(url: url, prefix: prefix, codec: .data, defaultTTL: defaultTTL, connections: connections,
                      commandTimeout: commandTimeout)
    }
}

extension RedisCacheLevel where Value == String {
    public convenience init(url: String, prefix: String, defaultTTL: Duration? = nil, connections: Int = 2,
                            commandTimeout: Duration = .seconds(2)) throws {
        try self.init(url: url, prefix: prefix, codec: .string, defaultTTL: defaultTTL, connections: connections,
                      commandTimeout: commandTimeout)
    }
}

extension RedisCacheLevel where Value: Codable {
    public convenience init(url: String, prefix: String, defaultTTL: Duration? = nil, connections: Int = 2,
                            commandTimeout: Duration = .seconds(2)) throws {
        try self.init(url: url, prefix: prefix, codec: .json(), defaultTTL: defaultTTL, connections: connections,
                      commandTimeout: commandTimeout)
    }
}
