import NIOCore

/// A RESP2 reply.
public enum RESPValue: Sendable, Equatable {
    case simpleString(String)
    case error(String)
    case integer(Int)
    /// `nil` is RESP's null bulk string (`$-1`).
    case bulkString(ByteBuffer?)
    /// `nil` is RESP's null array (`*-1`).
    case array([RESPValue]?)

    var bytes: [UInt8]? {
        if case .bulkString(let buffer?) = self { return Array(buffer.readableBytesView) }
        return nil
    }
}

/// Errors of the Redis client and level. Every failure of a request is one of these.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `redis://` URL cannot be used.
    case invalidURL(String)
    /// Connecting failed (refused, unreachable, handshake rejected).
    case connectionFailed(String)
    /// Recently failed to connect; requests fail fast until the next attempt.
    case unavailable(String)
    /// The connection closed with this request in flight.
    case connectionClosed
    /// No reply within the command timeout; the connection was closed.
    case timeout
    /// The server answered with an error (`-ERR …`).
    case server(String)
    /// The server's bytes are not RESP, or not the reply expected.
    case protocolError(String)

    public var description: String {
        switch self {
        case .invalidURL(let text): "invalid Redis URL: \(text)"
        case .connectionFailed(let text): "cannot connect to Redis: \(text)"
        case .unavailable(let text): "Redis unavailable: \(text)"
        case .connectionClosed: "Redis connection closed"
        case .timeout: "Redis command timed out"
        case .server(let text): "Redis error: \(text)"
        case .protocolError(let text): "Redis protocol error: \(text)"
        }
    }
}

/// Encodes commands as RESP arrays of bulk strings (binary-safe).
enum RESPEncoder {
    static func encode(_ arguments: [[UInt8]], into buffer: inout ByteBuffer) {
        buffer.writeString("*\(arguments.count)\r\n")
        for argument in arguments {
            buffer.writeString("$\(argument.count)\r\n")
            buffer.writeBytes(argument)
            buffer.writeString("\r\n")
        }
    }
}

/// Parses RESP2 incrementally: `nil` means "need more bytes"; the reader
/// index moves only past a complete value.
enum RESPParser {
    static func parse(_ buffer: inout ByteBuffer) throws -> RESPValue? {
        var copy = buffer
        guard let value = try parseValue(&copy) else { return nil }
        buffer.moveReaderIndex(to: copy.readerIndex)
        return value
    }

    private static func line(_ buffer: inout ByteBuffer) -> String? {
        let view = buffer.readableBytesView
        guard let cr = view.firstIndex(of: 0x0D), cr + 1 < view.endIndex, view[cr + 1] == 0x0A else { return nil }
        let length = cr - view.startIndex
        let text = buffer.readString(length: length)
        buffer.moveReaderIndex(forwardBy: 2)
        return text
    }

    private static func parseValue(_ buffer: inout ByteBuffer) throws -> RESPValue? {
        guard let type = buffer.readInteger(as: UInt8.self) else { return nil }
        guard let text = line(&buffer) else { return nil }
        switch type {
        case UInt8(ascii: "+"): return .simpleString(text)
        case UInt8(ascii: "-"): return .error(text)
        case UInt8(ascii: ":"):
            guard let number = Int(text) else { throw RedisError.protocolError("bad integer \(text)") }
            return .integer(number)
        case UInt8(ascii: "$"):
            guard let length = Int(text), length >= -1, length < 512 * 1024 * 1024 else {
                throw RedisError.protocolError("bad bulk length \(text)")
            }
            if length == -1 { return .bulkString(nil) }
            guard buffer.readableBytes >= length + 2, let bytes = buffer.readSlice(length: length) else { return nil }
            guard buffer.readInteger(as: UInt16.self) == 0x0D0A else { throw RedisError.protocolError("bulk string not terminated") }
            return .bulkString(bytes)
        case UInt8(ascii: "*"):
            guard let count = Int(text), count >= -1, count < 16 * 1024 * 1024 else {
                throw RedisError.protocolError("bad array length \(text)")
            }
            if count == -1 { return .array(nil) }
            var items: [RESPValue] = []
            items.reserveCapacity(count)
            for _ in 0..<count {
                guard let item = try parseValue(&buffer) else { return nil }
                items.append(item)
            }
            return .array(items)
        default:
            throw RedisError.protocolError("unknown reply type \(Character(UnicodeScalar(type)))")
        }
    }
}
