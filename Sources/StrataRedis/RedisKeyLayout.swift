/// How a level's keys are laid out in Redis: `prefix` (ending in `:`) and the
/// key's bytes with `%` and `:` percent-escaped (`%25`, `%3A`), so no key of
/// a level holds a separator after its prefix and prefixes never overlap.
enum RedisKeyLayout {
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
    static func escaped(_ bytes: [UInt8]) -> [UInt8] {
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

    /// The inverse of ``escaped(_:)``; `nil` for bytes it never produces (a
    /// separator, or `%` not followed by `25` or `3A`).
    static func unescaped(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
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

    /// Whether `name` is a key of the level with `prefix`, not one of a level
    /// whose prefix extends it (`app:x:` under `app:`).
    static func owns(_ name: [UInt8], prefix: [UInt8]) -> Bool {
        name.starts(with: prefix) && !name[prefix.count...].contains(separator)
    }

    /// The key bytes of the level with `prefix` stored under `name`, or `nil`
    /// if `name` is no key of that level.
    static func keyBytes(_ name: [UInt8], prefix: [UInt8]) -> [UInt8]? {
        guard name.starts(with: prefix) else { return nil }
        return unescaped(name[prefix.count...])
    }

    /// A glob pattern matching `bytes` literally.
    static func globEscaped(_ bytes: [UInt8]) -> [UInt8] {
        bytes.flatMap { byte in
            [UInt8(ascii: "*"), UInt8(ascii: "?"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "\\")].contains(byte)
                ? [UInt8(ascii: "\\"), byte] : [byte]
        }
    }
}
