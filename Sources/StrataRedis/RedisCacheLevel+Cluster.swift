import Strata

/// Where one of a level's writes goes: a connection (one server: the
/// tracking connection while subscribed, else a pooled one), or the master
/// serving the key's slot (a cluster; redirects followed): its tracking
/// connection while subscribed, so `NOLOOP` keeps the write from being
/// reported back, else a pooled one.
enum RedisWriteTarget {
    /// A connection to `server` (one server).
    case connection(RedisConnection, server: RedisClient)
    /// With the level's tracking connections per master, if it has them.
    case cluster(RedisClusterRouter, slot: Int, tracking: RedisClusterInvalidation?)
    /// One master of a cluster (its client, and the level's tracking
    /// connection to it, if any), redirects not followed: a back-fill judged
    /// by that master's clock goes nowhere else (a `MOVED` or `ASK` comes
    /// back as the reply; see `RedisMissBook`).
    case pinned(RedisClient, tracking: RedisConnection?)

    /// Sends `commands` (all on the target's slot) and waits for their
    /// replies even if the caller is cancelled meanwhile (see
    /// `RedisCacheLevel.sendWrite(_:on:)`).
    func send(_ commands: [[[UInt8]]]) async throws -> [RESPValue] {
        try await send(building: { _ in commands })
    }

    /// ``send(_:)`` of the commands `build` makes for the client of the
    /// server that runs them (on a cluster, each master the write is sent to
    /// while following redirects), so a deadline is put on that server's
    /// clock (``RedisServerClock``).
    func send(building build: (RedisClient) async throws -> [[[UInt8]]]) async throws -> [RESPValue] {
        switch self {
        case .connection(let connection, let server):
            return try await connection.send(batch: build(server), cancellable: false)
        case .cluster(let router, let slot, let tracking):
            var preferred: (@Sendable (String) -> RedisConnection?)?
            if let tracking { preferred = { address in tracking.writeConnection(for: address) } }
            return try await router.send(building: build, slot: slot, guarded: false, cancellable: false, preferred: preferred)
        case .pinned(let node, let tracking):
            let commands = try await build(node)
            if let tracking { return try await tracking.send(batch: commands, cancellable: false) }
            return try await node.send(batch: commands, guarded: false, cancellable: false)
        }
    }

    /// Whether this is the tracking connection `subscriber` holds (one
    /// server). On a cluster the connection is picked per attempt, so a
    /// back-fill's report is always looked for (see `RedisScriptEchoes`).
    func isTracked(by subscriber: RedisInvalidationSubscriber?) -> Bool {
        guard case .connection(let connection, _) = self else { return false }
        return subscriber?.writeConnection === connection
    }
}

extension RedisCacheLevel {
    /// The target of a write to the Redis key `name` (see ``RedisWriteTarget``).
    /// On a cluster, once a connection to the slot's master is ready, so that
    /// a write's time left is measured after any connect.
    func writeTarget(for name: [UInt8]) async throws -> RedisWriteTarget {
        guard let cluster = client.cluster else { return .connection(try await writeConnection(), server: client) }
        let slot = RedisClusterSlot.of(name)
        try await cluster.warm(slot: slot)
        return .cluster(cluster, slot: slot, tracking: clusterInvalidation)
    }

    /// The master of a cluster whose client is `node`, redirects not
    /// followed (see ``RedisWriteTarget/pinned(_:tracking:)``).
    func pinnedTarget(_ node: RedisClient) -> RedisWriteTarget {
        .pinned(node, tracking: clusterInvalidation?.writeConnection(for: "\(node.configuration.host):\(node.configuration.port)"))
    }

    /// On a cluster, the level's tracking connection to a master, for its writes there.
    var ownConnections: (@Sendable (String) -> RedisConnection?)? {
        guard let tracking = clusterInvalidation else { return nil }
        return { address in tracking.writeConnection(for: address) }
    }

    /// The hash tag that puts a level's helper key in the slot of `name` (a
    /// cluster), or nothing (one server): one script reads the key and its
    /// tombstones, and on a cluster they must share a slot.
    func slotTag(of name: [UInt8]) -> [UInt8] {
        client.isCluster ? RedisClusterSlot.hashTag(forSlot: RedisClusterSlot.of(name)) : []
    }

    /// On a cluster, the tombstone a clear leaves in `slot` (one per slot).
    func tombstoneOfAll(slot: Int) -> [UInt8] {
        Array("strata-tombstone-all:".utf8) + RedisClusterSlot.hashTag(forSlot: slot) + prefix
    }

    /// ``clearPrefixNow()`` on a cluster: a clear tombstone in every slot,
    /// then `SCAN` on every master and `UNLINK` per slot. A master that
    /// fails does not stop the others; the clear then throws, naming it. If
    /// the slot map changed meanwhile (a reshard moved keys from a master not
    /// yet scanned to one already scanned), it runs again (three rounds at most).
    ///
    /// A tombstone that was not written (a master unreachable, or refusing
    /// the script: out of memory, a missing permission) fails the clear too,
    /// even if every key went: without it, a back-fill of a read that began
    /// before the clear is not declined in that slot and brings an old value
    /// back. So the clear throws (the levels above are flushed, see
    /// ``reporting(_:partial:_:)``), is kept for replay with an outage
    /// backlog (tombstones included), and is logged (`RedisWarnings.clearTombstonesFailed`).
    func clearCluster(_ cluster: RedisClusterRouter) async throws -> Int {
        echoes.forgetAll()
        var removed = 0
        for _ in 0..<3 {
            let epoch = cluster.epoch
            var failures = await writeClearTombstones(cluster)
            for master in try await cluster.masters() {
                do { removed += try await clearNode(master, cluster) } catch { failures.append("\(error)") }
            }
            if !failures.isEmpty { throw RedisError.unavailable("clear failed on \(failures.joined(separator: "; "))") }
            if cluster.epoch == epoch { break }
        }
        return removed
    }

    /// Writes the clear tombstone of every slot; returns what failed, in
    /// words (none: every slot has its tombstone), and logs it.
    private func writeClearTombstones(_ cluster: RedisClusterRouter) async -> [String] {
        let script = Array(Self.tombstoneScript.utf8), milliseconds = Array(String(Self.tombstoneMilliseconds).utf8)
        var failures: [String] = []
        // In chunks of 1,024 (about 340 per master): one write of all
        // 16,384 could outlast the command timeout on a loaded server.
        for start in stride(from: 0, to: RedisClusterSlot.count, by: 1024) {
            let slots = start..<start + 1024
            let tombstones = slots.map { [RedisCommandName.eval, script, Array("1".utf8), tombstoneOfAll(slot: $0), milliseconds] }
            do {
                let replies = try await cluster.send(routedBatch: tombstones, guarded: false, cancellable: false)
                let refused = zip(slots, replies).filter { (try? RedisClient.checked($0.1)) == nil }
                if let (first, reply) = refused.first {
                    failures.append("tombstones of \(refused.count) slots from \(first) refused: \(reply)")
                }
            } catch {
                failures.append("tombstones of slots \(slots.lowerBound)-\(slots.upperBound - 1): \(error)")
            }
        }
        if !failures.isEmpty {
            warnings.clearTombstonesFailed.warn(["level": "\(name)", "failures": "\(failures.joined(separator: "; "))"])
        }
        return failures
    }

    /// `SCAN MATCH prefix*` on the master at `address`, `UNLINK` of what it
    /// lists (per slot, redirects followed).
    private func clearNode(_ address: String, _ cluster: RedisClusterRouter) async throws -> Int {
        try await unlinkOwnKeys(listedBy: cluster.node(address)) { names in
            let bySlot = Dictionary(grouping: names, by: { RedisClusterSlot.of($0) })
            let replies = try await cluster.send(routedBatch: bySlot.values.map { [RedisCommandName.unlink] + $0 },
                                                 guarded: false, cancellable: false, preferred: ownConnections)
            for reply in replies { _ = try RedisClient.checked(reply) }
        }
    }

    /// ``readChunk(_:)`` on a cluster, for names in several slots: one
    /// transaction (`MGET` and `PTTL`s) per slot, all at once, answers put
    /// back in the names' order.
    func readChunkBySlot(_ names: [[UInt8]]) async -> [CacheEntry<Value>?] {
        let bySlot = Dictionary(grouping: names.indices, by: { RedisClusterSlot.of(names[$0]) })
        return await withTaskGroup(of: ([Int], [CacheEntry<Value>?]).self) { group in
            for indices in bySlot.values {
                group.addTask { (indices, await self.readChunk(indices.map { names[$0] })) }
            }
            var results = [CacheEntry<Value>?](repeating: nil, count: names.count)
            for await (indices, entries) in group {
                for (index, entry) in zip(indices, entries) { results[index] = entry }
            }
            return results
        }
    }
}
