/// How keys (and level names) are written in a strata trace: as their
/// UTF-8 bytes, with `%`, spaces and control characters as `%XX` (two
/// upper-case hex digits per byte), so that every key is one field on one
/// line whatever it holds.
public enum TraceKeyEscaping {
    /// Whether `scalar` is written as `%XX` bytes: `%`, any Unicode white
    /// space (space, tab, no-break space, line separators) and any control
    /// character (C0, DEL, C1).
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "%" || scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
    }

    /// `user 7%` → `user%207%25`.
    public static func escape(_ key: String) -> String {
        var text = ""
        text.reserveCapacity(key.utf8.count)
        for scalar in key.unicodeScalars {
            guard needsEscape(scalar) else {
                text.unicodeScalars.append(scalar)
                continue
            }
            for byte in String(scalar).utf8 {
                text += "%" + String(hexDigits[Int(byte >> 4)]) + String(hexDigits[Int(byte & 0xF)])
            }
        }
        return text
    }

    private static let hexDigits = Array("0123456789ABCDEF")

    /// The key a field spells, or why it spells none (for ``TraceError/malformed(file:line:reason:)``).
    public static func unescape(_ field: ArraySlice<UInt8>) -> Result<String, Reason> {
        guard !field.isEmpty else { return .failure(.empty) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(field.count)
        var index = field.startIndex
        while index < field.endIndex {
            let byte = field[index]
            if byte == UInt8(ascii: "%") {
                guard field.endIndex - index >= 3, let high = hexValue(field[index + 1]), let low = hexValue(field[index + 2]) else {
                    return .failure(.badEscape)
                }
                bytes.append(high << 4 | low)
                index += 3
            } else {
                if byte < 0x20 || byte == 0x7F { return .failure(.controlByte) }
                bytes.append(byte)
                index += 1
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return .failure(.notUTF8) }
        return .success(text)
    }

    /// Why a field is not a key.
    public enum Reason: Error, Equatable, Sendable, CustomStringConvertible {
        case empty
        case badEscape
        case controlByte
        case notUTF8

        public var description: String {
            switch self {
            case .empty: "an empty key"
            case .badEscape: "a % not followed by two hex digits (write % itself as %25)"
            case .controlByte: "a control byte in the key (write it as %XX)"
            case .notUTF8: "the key's bytes, unescaped, are not UTF-8"
            }
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
