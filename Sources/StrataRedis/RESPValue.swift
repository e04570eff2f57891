import NIOCore

/// A reply from Redis: the RESP2 types, plus the RESP3 types so that a later
/// `HELLO 3` (push frames, maps, …) needs no new parser.
public enum RESPValue: Sendable, Equatable {
    /// A simple string (`+OK`).
    case simpleString(String)
    /// An error reply (`-ERR …`), with its text: an answer, not a thrown error.
    case error(String)
    /// An integer (`:1`).
    case integer(Int)
    /// `nil` is RESP's null bulk string (`$-1`).
    case bulkString(ByteBuffer?)
    /// `nil` is RESP's null array (`*-1`).
    case array([RESPValue]?)
    /// RESP3 null (`_`).
    case null
    /// RESP3 boolean (`#t`, `#f`).
    case boolean(Bool)
    /// RESP3 double (`,`), including `inf`, `-inf` and `nan`.
    case double(Double)
    /// RESP3 big number (`(`): an optional `-` and decimal digits.
    case bigNumber(String)
    /// RESP3 blob error (`!`).
    case blobError(ByteBuffer)
    /// RESP3 verbatim string (`=`): a three-letter ASCII format (`txt`, `mkd`) and the text.
    case verbatimString(format: String, text: ByteBuffer)
    /// RESP3 map (`%`), in the order received.
    case map([RESPPair])
    /// RESP3 set (`~`), in the order received.
    case set([RESPValue])
    /// RESP3 push (`>`): out-of-band data such as client-side caching invalidations.
    case push([RESPValue])
    /// A RESP3 attribute (`|`) and the value it annotates.
    indirect case attributed(attributes: [RESPPair], value: RESPValue)

    var bytes: [UInt8]? {
        if case .bulkString(let buffer?) = self { return Array(buffer.readableBytesView) }
        return nil
    }

    /// Appends this value's RESP encoding (RESP3 for the RESP3 types).
    func write(to buffer: inout ByteBuffer) {
        var bytes: [UInt8] = []
        write(to: &bytes)
        buffer.writeBytes(bytes)
    }

    /// Appends this value's RESP encoding. Recursive: meant for values the
    /// parser produced, which are at most ``RESPLimits/maxDepth`` deep.
    func write(to bytes: inout [UInt8]) {
        func line(_ type: Character, _ text: String) {
            bytes.append(type.asciiValue!)
            bytes += text.utf8
            bytes += [0x0D, 0x0A]
        }
        func blob(_ type: Character, _ payload: ByteBuffer) {
            line(type, String(payload.readableBytes))
            payload.withUnsafeReadableBytes { bytes += $0 }
            bytes += [0x0D, 0x0A]
        }
        func pairs(_ type: Character, _ pairs: [RESPPair]) {
            line(type, String(pairs.count))
            for pair in pairs { pair.key.write(to: &bytes); pair.value.write(to: &bytes) }
        }
        func items(_ type: Character, _ items: [RESPValue]) {
            line(type, String(items.count))
            for item in items { item.write(to: &bytes) }
        }
        switch self {
        case .simpleString(let text): line("+", text)
        case .error(let text): line("-", text)
        case .integer(let number): line(":", String(number))
        case .bulkString(nil): line("$", "-1")
        case .bulkString(let payload?): blob("$", payload)
        case .array(nil): line("*", "-1")
        case .array(let values?): items("*", values)
        case .null: line("_", "")
        case .boolean(let flag): line("#", flag ? "t" : "f")
        case .double(let number):
            line(",", number.isNaN ? "nan" : number.isInfinite ? (number < 0 ? "-inf" : "inf") : "\(number)")
        case .bigNumber(let digits): line("(", digits)
        case .blobError(let payload): blob("!", payload)
        case .verbatimString(let format, let text):
            line("=", String(format.utf8.count + 1 + text.readableBytes))
            bytes += format.utf8
            bytes.append(UInt8(ascii: ":"))
            text.withUnsafeReadableBytes { bytes += $0 }
            bytes += [0x0D, 0x0A]
        case .map(let entries): pairs("%", entries)
        case .set(let values): items("~", values)
        case .push(let values): items(">", values)
        case .attributed(let attributes, let value):
            pairs("|", attributes)
            value.write(to: &bytes)
        }
    }
}

extension RESPValue {
    /// The value with any attributes around it taken off (RESP3 attributes
    /// describe a value; they never change what it is).
    var withoutAttributes: RESPValue {
        var value = self
        while case .attributed(_, let inner) = value { value = inner }
        return value
    }
}
