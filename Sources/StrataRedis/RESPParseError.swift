/// Why ``RESPParser`` rejected the server's bytes. After one of these the
/// stream cannot be resynchronised: the connection is closed.
public struct RESPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of rejection.
    public enum Kind: Sendable, Equatable {
        /// Not RESP: an unknown type byte, a bad number, a missing CRLF.
        case malformed
        /// Aggregates nested deeper than ``RESPLimits/maxDepth``.
        case tooDeep
        /// A length or count above a ``RESPLimits`` cap, or a line longer than allowed.
        case tooLarge
    }

    /// What kind of limit or rule the bytes broke.
    public var kind: Kind
    /// What was wrong, in words (the byte, the length, the cap).
    public var message: String

    /// An error of `kind` saying `message` (made by the parser only).
    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// `<kind>: <message>`.
    public var description: String { "\(kind): \(message)" }
}
