/// Errors of the Redis client and level. Every failure of a request is one of these.
public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `redis://` URL cannot be used.
    case invalidURL(String)
    /// The key prefix cannot be used (it is empty).
    case invalidPrefix(String)
    /// Connecting failed (refused, unreachable, handshake rejected).
    case connectionFailed(String)
    /// The server refused the configured user name or password (`WRONGPASS`,
    /// `NOAUTH`, …), in words. Never carries the password.
    case authenticationFailed(String)
    /// The TLS handshake failed (an untrusted or misnamed server certificate,
    /// a client certificate refused, a certificate file that cannot be read), in words.
    case tlsFailed(String)
    /// Recently failed to connect; requests fail fast until the next attempt.
    case unavailable(String)
    /// The connection closed with this request in flight.
    case connectionClosed
    /// No reply within the command timeout; the connection was closed.
    case timeout
    /// The server answered with an error (`-ERR …`).
    case server(String)
    /// The server's reply is not the one expected for the command.
    case protocolError(String)
    /// The server's bytes are malformed RESP, nested too deep or too large.
    /// The connection was closed and every command waiting on it failed with this.
    case invalidReply(RESPParseError)
    /// A Redis Cluster redirected one command (`MOVED`, `ASK`, `TRYAGAIN`)
    /// more times than the client follows; names the last redirect and node.
    case tooManyRedirects(String)

    /// In words, with any text from the server or the caller cut to 500
    /// characters (a hostile server's reply never becomes a huge message).
    public var description: String { clipped(fullDescription, to: 500) }

    private var fullDescription: String {
        switch self {
        case .invalidURL(let text): "invalid Redis URL: \(text)"
        case .invalidPrefix(let text): "invalid Redis key prefix: \(text)"
        case .connectionFailed(let text): "cannot connect to Redis: \(text)"
        case .authenticationFailed(let text): "Redis refused the credentials: \(text)"
        case .tlsFailed(let text): "Redis TLS failed: \(text)"
        case .unavailable(let text): "Redis unavailable: \(text)"
        case .connectionClosed: "Redis connection closed"
        case .timeout: "Redis command timed out"
        case .server(let text): "Redis error: \(text)"
        case .protocolError(let text): "Redis protocol error: \(text)"
        case .invalidReply(let error): "invalid Redis reply: \(error)"
        case .tooManyRedirects(let text): "Redis Cluster redirected too often: \(text)"
        }
    }
}
