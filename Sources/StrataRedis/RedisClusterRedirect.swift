/// A cluster node's answer that the command belongs elsewhere, or later.
enum RedisClusterRedirect: Equatable, CustomStringConvertible {
    /// `-MOVED <slot> <host:port>`: the slot lives on that node now.
    case moved(slot: Int, address: String)
    /// `-ASK <slot> <host:port>`: the slot is migrating; ask that node, once, after `ASKING`.
    case ask(slot: Int, address: String)
    /// `-TRYAGAIN`: a multi-key command met a slot half migrated.
    case tryAgain
    /// A `MOVED` or `ASK` that cannot be followed (no slot, a slot out of
    /// range, no `host:port`, a port that is not a number from 1 to 65535):
    /// the router fails the command with ``RedisError/protocolError(_:)``
    /// (``error(from:)``) rather than guess where to send it.
    case malformed(String)

    /// The redirect `reply` carries, if it is one.
    init?(_ reply: RESPValue) {
        switch reply {
        case .error(let message): self.init(message: message)
        case .blobError(let message): self.init(message: String(buffer: message))
        default: return nil
        }
    }

    /// The redirect an error message is, or `nil` for another error.
    init?(message: String) {
        if message.hasPrefix("TRYAGAIN") {
            self = .tryAgain
            return
        }
        let parts = message.split(separator: " ", omittingEmptySubsequences: false)
        guard let kind = parts.first, kind == "MOVED" || kind == "ASK" else { return nil }
        guard parts.count == 3, let slot = Int(parts[1]), (0..<RedisClusterSlot.count).contains(slot),
              let colon = parts[2].lastIndex(of: ":"),
              let port = Int(parts[2][parts[2].index(after: colon)...]), (1...65_535).contains(port) else {
            self = .malformed(message)
            return
        }
        // Redis 7 may leave the host out (`:7001`): the node that answered, unknown here, so the caller supplies it.
        let host = parts[2][..<colon]
        let address = (host.isEmpty ? "?" : String(host)) + ":\(port)"
        self = kind == "MOVED" ? .moved(slot: slot, address: address) : .ask(slot: slot, address: address)
    }

    /// The error a redirect that cannot be followed (``malformed(_:)``),
    /// from the node at `address`, fails its command with.
    static func error(_ message: String, from address: String) -> RedisError {
        .protocolError("\(address) answered a redirect that cannot be followed (slot 0-16383 and host:port with a port 1-65535 expected): \(message)")
    }

    var description: String {
        switch self {
        case .moved(let slot, let address): "MOVED \(slot) \(address)"
        case .ask(let slot, let address): "ASK \(slot) \(address)"
        case .tryAgain: "TRYAGAIN"
        case .malformed(let message): message
        }
    }
}
