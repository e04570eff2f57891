/// Which master serves each slot: read from `CLUSTER SLOTS`.
struct RedisClusterTopology: Sendable, Equatable {
    /// Masters as `host:port`, in the order first met.
    var masters: [String] = []
    /// Per slot, an index into ``masters``; -1 for a slot no master serves.
    var owners = [Int16](repeating: -1, count: RedisClusterSlot.count)

    /// The master serving `slot`, if any.
    func master(ofSlot slot: Int) -> String? {
        let index = owners[slot]
        return index < 0 ? nil : masters[Int(index)]
    }

    /// Points `slot` at `address` (after a `MOVED`).
    mutating func move(slot: Int, to address: String) {
        if let index = masters.firstIndex(of: address) {
            owners[slot] = Int16(index)
        } else {
            masters.append(address)
            owners[slot] = Int16(masters.count - 1)
        }
    }

    /// Parses a `CLUSTER SLOTS` reply: per range `[start, end, [host, port, id, …], replicas…]`.
    /// An empty host is the node asked (`askedHost`).
    init(slotsReply reply: RESPValue, askedHost: String) throws {
        guard case .array(let ranges?) = reply else { throw RedisError.protocolError("CLUSTER SLOTS answered \(reply)") }
        for range in ranges {
            guard case .array(let parts?) = range, parts.count >= 3,
                  case .integer(let start) = parts[0], case .integer(let end) = parts[1], start >= 0, start <= end,
                  end < RedisClusterSlot.count,
                  case .array(let master?) = parts[2], master.count >= 2, let hostBytes = master[0].bytes,
                  case .integer(let port) = master[1] else {
                throw RedisError.protocolError("CLUSTER SLOTS: unexpected range \(range)")
            }
            var host = String(decoding: hostBytes, as: UTF8.self)
            if host.isEmpty || host == "?" { host = askedHost }
            let address = "\(host):\(port)"
            let index: Int
            if let known = masters.firstIndex(of: address) { index = known } else {
                masters.append(address)
                index = masters.count - 1
            }
            for slot in Int(start)...Int(end) { owners[slot] = Int16(index) }
        }
        guard !masters.isEmpty else { throw RedisError.protocolError("CLUSTER SLOTS lists no slots (is the cluster created?)") }
    }

    init() {}
}
