/// Why ``RESPParser`` rejected the server's bytes. After one of these the
/// stream cannot be resynchronised: the connection is closed.
public struct RESPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// Not RESP: an unknown type byte, a bad number, a missing CRLF.
        case malformed
        /// Aggregates nested deeper than ``RESPLimits/maxDepth``.
        case tooDeep
        /// A length or count above a ``RESPLimits`` cap, or a line longer than allowed.
        case tooLarge
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind): \(message)" }
}
