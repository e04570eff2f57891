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

    public init(url: String, connections: Int = 2, commandTimeout: Duration = .seconds(2),
                connectTimeout: Duration = .seconds(1), replyLimits: RESPLimits = .default) throws {
        guard url.hasPrefix("redis://") else { throw RedisError.invalidURL("\(url) (expected redis://host:port[/db])") }
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
                guard let number = Int(db), (0...15_000).contains(number) else { throw RedisError.invalidURL("\(url): database \"\(db)\"") }
                database = number
            }
            rest = rest[..<slash]
        }
        var host = String(rest), port = 6379
        if let colon = rest.lastIndex(of: ":") {
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65535).contains(number) else {
                throw RedisError.invalidURL("\(url): port")
            }
            port = number
            host = String(rest[..<colon])
        }
        guard !host.isEmpty, !host.contains(where: { $0.isWhitespace }) else { throw RedisError.invalidURL("\(url): host") }
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
