import Synchronization

/// How a level's keys are named in Redis, after its `prefix` (which ends in `:`).
public enum RedisKeyLayout: Sendable, Equatable {
    /// `prefix` + the key's bytes as they are: `user:7` under `app:` is
    /// `app:user:7`, what `redis-cli GET app:user:7` and every other client
    /// name it. Everything under the prefix is the level's (`clear()` deletes
    /// it all), so two levels of a process on one server may not have
    /// overlapping prefixes (`app:` and `app:users:`): the second throws
    /// ``RedisError/invalidPrefix(_:)``.
    case natural
    /// `prefix` + the key with `%` and `:` percent-escaped (`app:user%3A7`):
    /// no key holds a `:` after the prefix, so levels `app:` and `app:x:`
    /// never share a key, but other clients must escape alike.
    case escaped

    /// The Redis name of the key whose bytes are `key`.
    func name(of key: [UInt8], prefix: [UInt8]) -> [UInt8] {
        switch self {
        case .natural: prefix + key
        case .escaped: prefix + Self.percentEscaped(key)
        }
    }

    /// The key bytes stored under `name`, or `nil` if `name` is no key of the level with `prefix`.
    func keyBytes(_ name: [UInt8], prefix: [UInt8]) -> [UInt8]? {
        guard name.starts(with: prefix) else { return nil }
        switch self {
        case .natural: return Array(name[prefix.count...])
        case .escaped: return Self.percentUnescaped(name[prefix.count...])
        }
    }

    /// Whether `name` is a key of the level with `prefix` (with `.escaped`,
    /// not one of a level whose prefix extends it: `app:x:1` under `app:`).
    func owns(_ name: [UInt8], prefix: [UInt8]) -> Bool {
        switch self {
        case .natural: name.starts(with: prefix)
        case .escaped: name.starts(with: prefix) && !name[prefix.count...].contains(Self.separator)
        }
    }

    static let separator = UInt8(ascii: ":")
    private static let percent = UInt8(ascii: "%")

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
    static func percentEscaped(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.contains(where: { $0 == separator || $0 == percent }) else { return bytes }
        var escaped: [UInt8] = []
        escaped.reserveCapacity(bytes.count + 8)
        for byte in bytes {
            switch byte {
            case separator: escaped += Array("%3A".utf8)
            case percent: escaped += Array("%25".utf8)
            default: escaped.append(byte)
            }
        }
        return escaped
    }

    /// The inverse of ``percentEscaped(_:)``; `nil` for bytes it never produces (a
    /// separator, or `%` not followed by `25` or `3A`).
    static func percentUnescaped(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        guard bytes.contains(where: { $0 == separator || $0 == percent }) else { return Array(bytes) }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == separator { return nil }
            guard byte == percent else {
                result.append(byte)
                index += 1
                continue
            }
            guard bytes.endIndex - index >= 3 else { return nil }
            switch (bytes[index + 1], bytes[index + 2]) {
            case (UInt8(ascii: "2"), UInt8(ascii: "5")): result.append(percent)
            case (UInt8(ascii: "3"), UInt8(ascii: "A")): result.append(separator)
            default: return nil
            }
            index += 3
        }
        return result
    }


    /// A glob pattern matching `bytes` literally.
    static func globEscaped(_ bytes: [UInt8]) -> [UInt8] {
        bytes.flatMap { byte in
            [UInt8(ascii: "*"), UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "\\")].contains(byte)
                ? [UInt8(ascii: "\\"), byte] : [byte]
        }
    }
}

/// The prefixes of the natural-layout levels alive in this process, per
/// server: a level whose prefix overlaps another's (one starts with the
/// other) would read, report and clear that level's keys as its own.
final class RedisPrefixClaim: Sendable {
    private static let live = Mutex<[String: [[UInt8]: Int]]>([:])
    private let server: String
    private let prefix: [UInt8]

    /// Claims `prefix` on `server`; throws if a live level's prefix overlaps it (the same prefix may be shared).
    init(server: String, prefix: [UInt8]) throws {
        let clash = Self.live.withLock { live -> [UInt8]? in
            let prefixes = live[server, default: [:]]
            if let other = prefixes.keys.first(where: { $0 != prefix && ($0.starts(with: prefix) || prefix.starts(with: $0)) }) {
                return other
            }
            live[server, default: [:]][prefix, default: 0] += 1
            return nil
        }
        if let clash {
            throw RedisError.invalidPrefix("\"\(String(decoding: prefix, as: UTF8.self))\" overlaps \"\(String(decoding: clash, as: UTF8.self))\" of another level on \(server): "
                                           + "each would take the other's keys for its own (use prefixes that do not start one another, or keyLayout: .escaped)")
        }
        self.server = server
        self.prefix = prefix
    }

    deinit {
        let server = self.server, prefix = self.prefix
        Self.live.withLock { live in
            guard let count = live[server]?[prefix] else { return }
            live[server]![prefix] = count > 1 ? count - 1 : nil
        }
    }
}
