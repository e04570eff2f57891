/// A cluster node's answer that the command belongs elsewhere, or later.
enum RedisClusterRedirect: Equatable, CustomStringConvertible {
    /// `-MOVED <slot> <host:port>`: the slot lives on that node now.
    case moved(slot: Int, address: String)
    /// `-ASK <slot> <host:port>`: the slot is migrating; ask that node, once, after `ASKING`.
    case ask(slot: Int, address: String)
    /// `-TRYAGAIN`: a multi-key command met a slot half migrated.
    case tryAgain

    /// The redirect `reply` carries, if it is one.
    init?(_ reply: RESPValue) {
        switch reply {
        case .error(let message): self.init(message: message)
        case .blobError(let message): self.init(message: String(buffer: message))
        default: return nil
        }
    }

    init?(message: String) {
        if message.hasPrefix("TRYAGAIN") {
            self = .tryAgain
            return
        }
        let parts = message.split(separator: " ")
        guard parts.count == 3, let slot = Int(parts[1]), (0..<RedisClusterSlot.count).contains(slot) else { return nil }
        var address = String(parts[2])
        guard address.contains(":") else { return nil }  // always host:port (or :port)
        // Redis 7 may leave the host out (`:7001`): the node that answered, unknown here, so the caller supplies it.
        if address.hasPrefix(":") { address = "?" + address }
        switch parts[0] {
        case "MOVED": self = .moved(slot: slot, address: address)
        case "ASK": self = .ask(slot: slot, address: address)
        default: return nil
        }
    }

    var description: String {
        switch self {
        case .moved(let slot, let address): "MOVED \(slot) \(address)"
        case .ask(let slot, let address): "ASK \(slot) \(address)"
        case .tryAgain: "TRYAGAIN"
        }
    }
}
