/// Reads that should not count as an access (the key inspector's): sent on
/// one connection, in one write, between `CLIENT NO-TOUCH ON` and `OFF`, so
/// no other caller's command on that pooled connection falls between them
/// and only these reads leave the keys' LRU/LFU clocks alone. Each returns
/// whether the server took `NO-TOUCH` (Redis 7.2+): an older one (unknown
/// subcommand) ran the reads as ordinary ones, which count as an access. A
/// cluster client sends them as usual (untouched: `false`).
extension RedisClient {
    /// `commands` as ``send(batch:)`` sends them (error replies as values).
    func sendUntouched(batch commands: [[[UInt8]]]) async throws -> (replies: [RESPValue], untouched: Bool) {
        if cluster != nil { return (try await send(batch: commands), false) }
        let all = try await send(batch: [RedisCommandName.noTouchOn] + commands + [RedisCommandName.noTouchOff],
                                 guarded: true, cancellable: true)
        guard all.count == commands.count + 2 else {
            throw RedisError.protocolError("\(all.count) replies to \(commands.count + 2) commands")
        }
        return (Array(all[1...commands.count]), !Self.isError(all[0]))
    }

    /// `commands` as ``send(transaction:)`` runs them.
    func sendUntouched(transaction commands: [[[UInt8]]]) async throws -> (replies: [RESPValue], untouched: Bool) {
        if cluster != nil { return (try await send(transaction: commands), false) }
        let sent = try await send(transaction: commands, prefix: [RedisCommandName.noTouchOn], suffix: [RedisCommandName.noTouchOff])
        return (sent.results, sent.prefix.first.map { !Self.isError($0) } ?? false)
    }

    /// Whether `reply` is a server error.
    static func isError(_ reply: RESPValue) -> Bool {
        switch reply {
        case .error, .blobError: true
        default: false
        }
    }
}
