import NIOCore

/// A reply in words, bounded: its type, its size and a short prefix, never
/// its whole text (a hostile or broken server's reply of the wrong type ends
/// up in an error message; copied whole, a 1M-element array made one of
/// 34 MB). At most ``maxDescriptionLength`` characters.
extension RESPValue: CustomStringConvertible {
    static var maxDescriptionLength: Int { 240 }

    /// The reply in words: type, size and a short prefix (see above).
    public var description: String { clipped(describe(depth: 0), to: Self.maxDescriptionLength) }

    private func describe(depth: Int) -> String {
        func text(_ string: String) -> String { "\"" + clipped(string, to: 48) + "\"" }
        func blob(_ kind: String, _ bytes: ByteBufferView) -> String {
            "\(kind) of \(bytes.count) bytes " + text(String(decoding: bytes.prefix(48), as: UTF8.self))
        }
        func aggregate(_ kind: String, _ count: Int, _ noun: String, _ first: [RESPValue]) -> String {
            let head = "\(kind) of \(count) \(noun)\(count == 1 ? "" : "s")"
            guard depth == 0, !first.isEmpty else { return head }
            let shown = first.prefix(3).map { clipped($0.describe(depth: depth + 1), to: 48) }
            return head + " [" + shown.joined(separator: ", ") + (count > 3 ? ", …]" : "]")
        }
        switch self {
        case .simpleString(let string): return text(string)
        case .error(let string): return "error " + text(string)
        case .integer(let number): return "\(number)"
        case .bulkString(nil): return "null bulk string"
        case .bulkString(let buffer?): return blob("bulk string", buffer.readableBytesView)
        case .array(nil): return "null array"
        case .array(let values?): return aggregate("array", values.count, "element", Array(values.prefix(3)))
        case .null: return "null"
        case .boolean(let flag): return "\(flag)"
        case .double(let number): return "\(number)"
        case .bigNumber(let digits): return "big number " + clipped(digits, to: 48)
        case .blobError(let buffer): return blob("blob error", buffer.readableBytesView)
        case .verbatimString(let format, let buffer): return blob("verbatim \(clipped(format, to: 8)) string", buffer.readableBytesView)
        case .map(let pairs): return aggregate("map", pairs.count, "pair", pairs.prefix(2).flatMap { [$0.key, $0.value] })
        case .set(let values): return aggregate("set", values.count, "element", Array(values.prefix(3)))
        case .push(let values): return aggregate("push", values.count, "element", Array(values.prefix(3)))
        case .attributed(_, let value): return value.describe(depth: depth)
        }
    }
}

/// `text` cut to `limit` characters, saying how long it was.
func clipped(_ text: String, to limit: Int) -> String {
    guard text.count > limit else { return text }
    return String(text.prefix(max(limit - 24, 8))) + "… (\(text.utf8.count) bytes)"
}
