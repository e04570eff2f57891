import NIOCore

/// An incremental RESP2/RESP3 reply parser without recursion.
///
/// It consumes bytes as they arrive and keeps its partial state (open
/// aggregates, a bulk payload awaited, how far the current line was searched)
/// between calls, so a reply split over many reads is examined once, not
/// re-parsed from its start on every read. Nesting is an explicit stack capped
/// by ``RESPLimits/maxDepth``; lengths and counts are checked against
/// ``RESPLimits`` before anything is allocated, and arrays reserve no more
/// room than the bytes already received could fill.
///
/// After it throws, the parser stays failed: the stream cannot be resynchronised.
public struct RESPParser: Sendable {
    /// The caps this parser enforces.
    public let limits: RESPLimits

    private enum FrameKind {
        case array, set, push, map, attribute
        /// An attribute received; waiting for the value it annotates.
        case attributed([RESPPair])
    }

    /// An aggregate whose elements are still arriving.
    private struct Frame {
        var kind: FrameKind
        var remaining: Int
        var items: [RESPValue]
    }

    private var open: [Frame] = []
    /// The type (`$`, `!`, `=`) and length of a bulk payload whose header was read.
    private var awaitedBulk: (type: UInt8, length: Int)?
    /// Bytes after the type byte of the current line already searched for CRLF.
    private var scanned = 0
    private var failure: RESPParseError?

    /// A parser at the start of a stream, enforcing `limits`.
    public init(limits: RESPLimits = .default) {
        self.limits = limits
    }

    /// The next complete reply, consuming its bytes from `buffer`; `nil` when
    /// more bytes are needed (what has arrived is consumed and remembered).
    public mutating func next(_ buffer: inout ByteBuffer) throws(RESPParseError) -> RESPValue? {
        if let failure { throw failure }
        do {
            return try step(&buffer)
        } catch {
            failure = error
            throw error
        }
    }

    /// Parses from the readable bytes in one pass over raw memory, then
    /// consumes what it used (everything up to the reply, or all it could).
    private mutating func step(_ buffer: inout ByteBuffer) throws(RESPParseError) -> RESPValue? {
        let source = buffer  // a second reference to the same storage, for slicing bulk payloads
        var consumed = 0
        let reply = try buffer.withUnsafeReadableBytes { bytes throws(RESPParseError) -> RESPValue? in
            while true {
                let value: RESPValue
                if let (type, length) = awaitedBulk {
                    guard bytes.count - consumed - 2 >= length else { return nil }  // (length + 2 could overflow)
                    guard bytes[consumed + length] == 0x0D, bytes[consumed + length + 1] == 0x0A else {
                        throw malformed("bulk payload not followed by CRLF")
                    }
                    let payload = source.getSlice(at: source.readerIndex + consumed, length: length)!
                    consumed += length + 2
                    awaitedBulk = nil
                    value = try bulk(type, payload)
                } else {
                    let (used, scalar) = try readLine(UnsafeRawBufferPointer(rebasing: bytes[consumed...]))
                    guard used > 0 else { return nil }
                    consumed += used
                    guard let scalar else { continue }  // the line started a bulk payload or an aggregate
                    value = scalar
                }
                if let complete = try deliver(value) { return complete }
            }
        }
        buffer.moveReaderIndex(forwardBy: consumed)
        return reply
    }

    /// Adds `value` to the innermost open aggregate, closing every aggregate it
    /// completes; returns the reply when the outermost one (or a lone scalar) is done.
    private mutating func deliver(_ value: RESPValue) throws(RESPParseError) -> RESPValue? {
        var value = value
        while let top = open.indices.last {
            open[top].items.append(value)
            open[top].remaining -= 1
            guard open[top].remaining == 0 else { return nil }
            let frame = open.removeLast()
            switch frame.kind {
            case .array: value = .array(frame.items)
            case .set: value = .set(frame.items)
            case .push: value = .push(frame.items)
            case .map: value = .map(Self.pairs(frame.items))
            case .attribute:
                try push(.attributed(Self.pairs(frame.items)), count: 1, arrived: 0)
                return nil
            case .attributed(let attributes): value = .attributed(attributes: attributes, value: frame.items[0])
            }
        }
        return value
    }

    private static func pairs(_ items: [RESPValue]) -> [RESPPair] {
        stride(from: 0, to: items.count, by: 2).map { RESPPair(key: items[$0], value: items[$0 + 1]) }
    }

    private mutating func push(_ kind: FrameKind, count: Int, arrived: Int) throws(RESPParseError) {
        guard open.count < limits.maxDepth else {
            throw RESPParseError(.tooDeep, "aggregates nested deeper than \(limits.maxDepth)")
        }
        var items: [RESPValue] = []
        items.reserveCapacity(min(count, arrived / 3))  // the smallest element, `_\r\n`, is 3 bytes
        open.append(Frame(kind: kind, remaining: count, items: items))
    }

    /// Reads the line at the start of `bytes` (a type byte, text, CRLF):
    /// returns how many bytes it took (0 until its CRLF has arrived, having
    /// noted how far it searched) and its scalar, if it is one.
    private mutating func readLine(_ bytes: UnsafeRawBufferPointer) throws(RESPParseError) -> (Int, RESPValue?) {
        guard let type = bytes.first else { return (0, nil) }
        guard Self.isType(type) else { throw malformed("unknown reply type byte \(type)") }
        var index = 1 + scanned
        while index < bytes.count, bytes[index] != 0x0D, bytes[index] != 0x0A { index += 1 }
        let length = index - 1
        guard length <= limits.maxLineLength else { throw tooLarge("line longer than \(limits.maxLineLength) bytes") }
        guard index < bytes.count else {
            scanned = length
            return (0, nil)
        }
        guard bytes[index] == 0x0D else { throw malformed("line feed without carriage return") }
        guard index + 1 < bytes.count else {
            scanned = length  // search again from the carriage return
            return (0, nil)
        }
        guard bytes[index + 1] == 0x0A else { throw malformed("carriage return without line feed") }
        scanned = 0
        let consumed = length + 3
        let line = UnsafeRawBufferPointer(rebasing: bytes[1..<index])
        return (consumed, try header(type, line, arrived: bytes.count - consumed))
    }

    private static func isType(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x2B /* + */, 0x2D /* - */, 0x3A /* : */, 0x24 /* $ */, 0x2A /* * */,
             0x5F /* _ */, 0x23 /* # */, 0x2C /* , */, 0x28 /* ( */, 0x21 /* ! */,
             0x3D /* = */, 0x25 /* % */, 0x7E /* ~ */, 0x3E /* > */, 0x7C /* | */:
            true
        default:
            false
        }
    }

    /// A scalar, or `nil` after starting a bulk payload or an aggregate.
    private mutating func header(_ type: UInt8, _ line: UnsafeRawBufferPointer, arrived: Int) throws(RESPParseError) -> RESPValue? {
        switch type {
        case 0x2B /* + */: return .simpleString(String(decoding: line, as: UTF8.self))
        case 0x2D /* - */: return .error(String(decoding: line, as: UTF8.self))
        case 0x3A /* : */:
            let signed = line.first == 0x2D /* - */ || line.first == 0x2B /* + */
            guard let number = Self.digits(line[(signed ? 1 : 0)...], negative: line.first == 0x2D /* - */) ?? nil else {
                throw malformed("bad integer")
            }
            return .integer(number)
        case 0x5F /* _ */:
            guard line.isEmpty else { throw malformed("null with a payload") }
            return .null
        case 0x23 /* # */:
            guard line.count == 1, line[0] == 0x74 /* t */ || line[0] == 0x66 /* f */ else { throw malformed("bad boolean") }
            return .boolean(line[0] == 0x74 /* t */)
        case 0x2C /* , */:
            guard let number = Double(String(decoding: line, as: UTF8.self)) else { throw malformed("bad double") }
            return .double(number)
        case 0x28 /* ( */:
            guard Self.digits(line[(line.first == 0x2D /* - */ ? 1 : 0)...], negative: false) != nil else {
                throw malformed("bad big number")
            }
            return .bigNumber(String(decoding: line, as: UTF8.self))
        case 0x24 /* $ */, 0x21 /* ! */, 0x3D /* = */:
            let length = try self.length(line, nullable: type == 0x24 /* $ */)
            if length == -1 { return .bulkString(nil) }
            guard length <= limits.maxBulkLength else {
                throw tooLarge("bulk of \(length) bytes, above \(limits.maxBulkLength)")
            }
            guard type != 0x3D /* = */ || length >= 4 else { throw malformed("verbatim string without a format") }
            awaitedBulk = (type, length)
            return nil
        default:  // aggregates: * ~ > % |
            let count = try self.length(line, nullable: type == 0x2A /* * */)
            if count == -1 { return .array(nil) }
            let paired = type == 0x25 /* % */ || type == 0x7C /* | */
            let (elements, overflow) = count.multipliedReportingOverflow(by: paired ? 2 : 1)
            guard !overflow, elements <= limits.maxAggregateCount else {
                throw tooLarge("aggregate of \(count) elements, above \(limits.maxAggregateCount)")
            }
            let kind: FrameKind = switch type {
            case 0x2A /* * */: .array
            case 0x7E /* ~ */: .set
            case 0x3E /* > */: .push
            case 0x25 /* % */: .map
            default: .attribute
            }
            if elements == 0 {
                switch kind {
                case .attribute:
                    try push(.attributed([]), count: 1, arrived: 0)
                    return nil
                default:
                    guard open.count < limits.maxDepth else {
                        throw RESPParseError(.tooDeep, "aggregates nested deeper than \(limits.maxDepth)")
                    }
                    return switch kind {
                    case .set: .set([])
                    case .push: .push([])
                    case .map: .map([])
                    default: .array([])
                    }
                }
            }
            try push(kind, count: elements, arrived: arrived)
            return nil
        }
    }

    private func bulk(_ type: UInt8, _ payload: ByteBuffer) throws(RESPParseError) -> RESPValue {
        switch type {
        case 0x24 /* $ */: return .bulkString(payload)
        case 0x21 /* ! */: return .blobError(payload)
        default:
            let view = payload.readableBytesView
            let format = view.prefix(3)
            guard view[view.startIndex + 3] == 0x3A /* : */,
                  format.allSatisfy({ $0 < 0x80 && $0 != 0x3A /* : */ }) else {
                throw malformed("verbatim string format is not three ASCII bytes and a colon")
            }
            return .verbatimString(format: String(decoding: format, as: UTF8.self),
                                   text: payload.getSlice(at: payload.readerIndex + 4, length: payload.readableBytes - 4)!)
        }
    }

    /// A length or count: decimal digits, or `-1` where RESP allows a null.
    private func length(_ line: UnsafeRawBufferPointer, nullable: Bool) throws(RESPParseError) -> Int {
        if nullable, line.count == 2, line[0] == 0x2D /* - */, line[1] == 0x31 /* 1 */ { return -1 }
        switch Self.digits(line[...], negative: false) {
        case let value??: return value
        case .some(nil): throw tooLarge("length \(String(decoding: line.prefix(32), as: UTF8.self)) does not fit in Int")
        case nil: throw malformed("bad length \"\(String(decoding: line.prefix(32), as: UTF8.self))\"")
        }
    }

    /// `nil` if `bytes` is empty or not all decimal digits; `.some(nil)` if
    /// the number does not fit in `Int`.
    private static func digits(_ bytes: Slice<UnsafeRawBufferPointer>, negative: Bool) -> Int?? {
        guard !bytes.isEmpty else { return nil }
        var value = 0, overflow = false
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = negative ? times.subtractingReportingOverflow(Int(byte &- 0x30))
                                            : times.addingReportingOverflow(Int(byte &- 0x30))
            overflow = overflow || overflow1 || overflow2
            value = sum
        }
        return overflow ? .some(nil) : value
    }

    private func malformed(_ message: String) -> RESPParseError { RESPParseError(.malformed, message) }
    private func tooLarge(_ message: String) -> RESPParseError { RESPParseError(.tooLarge, message) }
}
