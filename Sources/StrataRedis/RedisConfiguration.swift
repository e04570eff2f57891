/// Where and how to reach Redis: parsed from `redis://[:password@]host[:port][/db]`.
public struct RedisConfiguration: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var password: String?
    public var database: Int
    /// Connections in the pool; requests are pipelined on each.
    public var connections: Int
    /// How long a command may wait for its reply before the connection is closed.
    public var commandTimeout: Duration
    public var connectTimeout: Duration
    /// Caps on replies (nesting, bulk and aggregate sizes); a reply beyond
    /// them fails with ``RedisError/invalidReply(_:)`` and closes its connection.
    public var replyLimits: RESPLimits

    /// `url` with its password replaced by `***` (`redis://:***@host:6379`,
    /// `redis://user:***@host`), for every message that shows a URL: errors
    /// reach terminals and log files, which must not hold the server's
    /// password. The credentials are found as ``init(url:connections:commandTimeout:connectTimeout:replyLimits:)``
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

    public init(url: String, connections: Int = 2, commandTimeout: Duration = .seconds(2),
                connectTimeout: Duration = .seconds(1), replyLimits: RESPLimits = .default) throws {
        let shown = Self.redacted(url)  // what error messages quote
        guard url.hasPrefix("redis://") else { throw RedisError.invalidURL("\(shown) (expected redis://host:port[/db])") }
        var rest = Substring(url.dropFirst("redis://".count))
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let credentials = rest[..<at]
            password = credentials.split(separator: ":", maxSplits: 1).last.map(String.init)
            if credentials.hasPrefix(":") { password = String(credentials.dropFirst()) }
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
        guard connections >= 1 else { throw RedisError.invalidURL("connections must be at least 1") }
        self.host = host
        self.port = port
        self.password = password
        self.database = database
        self.connections = connections
        self.commandTimeout = commandTimeout
        self.connectTimeout = connectTimeout
        self.replyLimits = replyLimits
    }
}

/// Descriptions show the password as `***`: a configuration printed or logged
/// must not leak it (the default description would print every field).
extension RedisConfiguration: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String {
        "redis://\(password == nil ? "" : ":***@")\(host):\(port)/\(database) (\(connections) connections)"
    }

    public var debugDescription: String { "RedisConfiguration(\(description))" }
}
