/// Where and how to reach Redis: parsed from
/// `redis://[[user]:password@]host[:port][/db]`, or `rediss://…` for TLS.
///
/// - `redis://user:password@host` authenticates as the ACL user `user`
///   (`AUTH user password`); `redis://:password@host` (or
///   `redis://password@host`) as the default user (`AUTH password`).
///   Every connection the client opens authenticates so, the invalidation
///   connection included. The URL's parts are taken as written (no
///   percent-decoding).
/// - `rediss://` connects over TLS with ``RedisTLS``'s defaults (the system's
///   trust roots, the server's name verified); pass `tls:` (or set ``tls``)
///   for a CA file, a client certificate, another server name.
public struct RedisConfiguration: Sendable, Equatable {
    /// The server's host name or IP address.
    public var host: String
    /// The server's TCP port (6379 when the URL names none).
    public var port: Int
    /// The ACL user to authenticate as; `nil` for the default user. Needs a ``password``.
    public var username: String?
    /// The password to authenticate with (`AUTH`); `nil`: none.
    public var password: String?
    /// The database number (0 by default; any other is `SELECT`ed on each connection).
    public var database: Int
    /// TLS settings; `nil` for a plain TCP connection.
    public var tls: RedisTLS?
    /// Connections in the pool; requests are pipelined on each.
    public var connections: Int
    /// How long a command may wait for its reply before the connection is closed.
    public var commandTimeout: Duration
    /// How long a connect may take (TCP, then the TLS handshake, each).
    public var connectTimeout: Duration
    /// Caps on replies (nesting, bulk and aggregate sizes); a reply beyond
    /// them fails with ``RedisError/invalidReply(_:)`` and closes its connection.
    public var replyLimits: RESPLimits

    /// `url` with its password replaced by `***` (`redis://:***@host:6379`,
    /// `redis://user:***@host`), for every message that shows a URL: errors
    /// reach terminals and log files, which must not hold the server's
    /// password. The credentials are found as ``init(url:connections:commandTimeout:connectTimeout:replyLimits:tls:)``
    /// finds them (up to the last `@` after the scheme), so whatever it would
    /// take as the password is what is hidden, whatever the scheme.
    public static func redacted(_ url: String) -> String {
        let afterScheme = url.range(of: "://").map(\.upperBound) ?? url.startIndex
        guard let at = url[afterScheme...].lastIndex(of: "@") else { return url }
        let credentials = url[afterScheme..<at]
        // A user name stays only when a non-empty password follows it: for
        // `name:` the parser takes `name` itself as the password.
        var kept: Substring = credentials.hasPrefix(":") ? ":" : ""
        if let colon = credentials.firstIndex(of: ":"), colon != credentials.startIndex,
           credentials.index(after: colon) != credentials.endIndex {
            kept = credentials[...colon]
        }
        return url[..<afterScheme] + kept + "***" + url[at...]
    }

    /// Parses `url` (see the type's documentation).
    /// - Parameters:
    ///   - url: `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS.
    ///   - connections: the pool's size.
    ///   - commandTimeout: how long a command may wait for its reply.
    ///   - connectTimeout: how long a connect may take.
    ///   - replyLimits: the largest replies accepted (``RESPLimits``).
    ///   - tls: TLS settings. `rediss://` without them uses ``RedisTLS/init(caCertificateFile:certificateFile:privateKeyFile:serverName:verifiesServerName:)``'s
    ///   defaults; given with `redis://`, they turn TLS on all the same.
    public init(url: String, connections: Int = 2, commandTimeout: Duration = .seconds(2),
                connectTimeout: Duration = .seconds(1), replyLimits: RESPLimits = .default, tls: RedisTLS? = nil) throws {
        let shown = Self.redacted(url)  // what error messages quote
        let scheme: String
        if url.hasPrefix("redis://") { scheme = "redis://" } else if url.hasPrefix("rediss://") { scheme = "rediss://" } else {
            throw RedisError.invalidURL("\(shown) (expected redis://host:port[/db] or rediss:// for TLS)")
        }
        var rest = Substring(url.dropFirst(scheme.count))
        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            // `user:password`, `:password` or `password` (what redacted(_:) hides).
            let parts = credentials.split(separator: ":", maxSplits: 1)
            password = parts.last.map(String.init)
            if credentials.hasPrefix(":") {
                password = String(credentials.dropFirst())
            } else if parts.count == 2 {
                username = String(parts[0])
            }
            rest = rest[rest.index(after: at)...]
        }
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let db = rest[rest.index(after: slash)...]
            if !db.isEmpty {
                guard let number = Int(db), (0...15_000).contains(number) else { throw RedisError.invalidURL("\(shown): database \"\(db)\"") }
                database = number
            }
            rest = rest[..<slash]
        }
        var host = String(rest), port = 6379
        if let colon = rest.lastIndex(of: ":") {
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65535).contains(number) else {
                throw RedisError.invalidURL("\(shown): port")
            }
            port = number
            host = String(rest[..<colon])
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace }) else { throw RedisError.invalidURL("\(shown): host") }
        try self.init(host: host, port: port, username: username, password: password, database: database,
                      tls: tls ?? (scheme == "rediss://" ? RedisTLS() : nil), connections: connections,
                      commandTimeout: commandTimeout, connectTimeout: connectTimeout, replyLimits: replyLimits)
    }

    /// A configuration from its parts, for settings that do not come as a URL.
    public init(host: String, port: Int = 6379, username: String? = nil, password: String? = nil, database: Int = 0,
                tls: RedisTLS? = nil, connections: Int = 2, commandTimeout: Duration = .seconds(2),
                connectTimeout: Duration = .seconds(1), replyLimits: RESPLimits = .default) throws {
        guard connections >= 1 else { throw RedisError.invalidURL("connections must be at least 1") }
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.tls = tls
        self.connections = connections
        self.commandTimeout = commandTimeout
        self.connectTimeout = connectTimeout
        self.replyLimits = replyLimits
    }
}

/// Descriptions show the password as `***`: a configuration printed or logged
/// must not leak it (the default description would print every field).
extension RedisConfiguration: CustomStringConvertible, CustomDebugStringConvertible {
    /// `redis[s]://[user:***@]host:port/db (n connections)`, without the password.
    public var description: String {
        let credentials = password == nil ? "" : "\(username ?? ""):***@"
        return "\(tls == nil ? "redis" : "rediss")://\(credentials)\(host):\(port)/\(database) (\(connections) connections)"
    }

    /// The ``description`` with the TLS settings, still without the password.
    public var debugDescription: String { "RedisConfiguration(\(description)\(tls.map { ", \($0)" } ?? ""))" }
}
