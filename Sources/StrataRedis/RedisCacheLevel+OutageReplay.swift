import Strata

/// Writes accepted during an outage (`outageBacklog:`), replayed once Redis
/// answers again (see ``RedisOutageBacklog``).
///
/// A set, remove or clear that fails because Redis cannot be reached (refused,
/// unavailable, closed, timed out) is kept, newest per key, and does not
/// throw: the write will land. A task probes Redis (`PING`, 50 ms doubling to
/// 2 s apart) and replays the writes once it answers: the clear first, then
/// each key's newest write, reported to the compositions of this process as
/// writes from nowhere (they drop the key). The levels above in every process
/// have dropped what they held when contact was lost and again when it came
/// back. Kept in memory: a process that exits before Redis is back loses
/// them, and a key written by another process during a partition gets this
/// process's write after it (last writer wins).
extension RedisCacheLevel {
    /// Writes kept for replay now (a pending clear counts as one).
    public var writesAwaitingReplay: Int { backlog?.pending ?? 0 }
    /// Writes replayed so far.
    public var writesReplayed: Int { backlog?.replayed ?? 0 }
    /// Writes dropped because the backlog was full (the oldest go first).
    public var writesDroppedFromBacklog: Int { backlog?.dropped ?? 0 }

    /// Keeps `write` for replay if `error` says Redis could not be reached
    /// and the level has a backlog; otherwise rethrows it.
    func keepForReplay(_ write: RedisOutageBacklog<Key, Value>.Write, of key: Key, after error: any Error) throws {
        guard let backlog, Self.isUnreachable(error) else { throw error }
        if backlog.keep(write, of: key, name: redisKey(key)) { startReplay() }
    }

    /// Redis could not be reached: the write may be kept for later.
    static func isUnreachable(_ error: any Error) -> Bool {
        switch error as? RedisError {
        case .connectionFailed, .unavailable, .connectionClosed, .timeout: true
        default: false
        }
    }

    /// Starts the probe-and-replay task (one at a time: see ``RedisOutageBacklog/keep(_:of:name:)``).
    func startReplay() {
        Task.detached { [weak self] in await self?.replayWhenReachable() }
    }

    private func replayWhenReachable() async {
        guard let backlog else { return }
        var pause = Duration.milliseconds(50)
        while !Task.isCancelled {
            try? await Task.sleep(for: pause)  // a backoff between probes, not a wait for an event
            guard (try? await client.sendPastBreaker([RedisCommandName.ping])) != nil else {
                pause = min(pause * 2, .seconds(2))
                continue
            }
            pause = .milliseconds(50)
            let (clear, entries) = backlog.take()
            if clear, (try? await reporting(.all, partial: true, { try await clearPrefixNow() })) == nil {
                backlog.putBack(clear: true, entries)
                continue
            }
            if clear { backlog.landed() }
            var failed: [(name: [UInt8], entry: RedisOutageBacklog<Key, Value>.Entry)] = []
            for (name, entry) in entries {
                do {
                    switch entry.write {
                    case .set(let value, let expiresAt): try await setNow(value, forKey: entry.key, expiresAt: expiresAt)
                    case .remove: try await removeNow(entry.key)
                    }
                    backlog.landed()
                } catch {
                    failed.append((name, entry))
                }
            }
            if !failed.isEmpty {
                backlog.putBack(clear: false, failed)
                continue
            }
            if backlog.finishIfEmpty() { return }
        }
    }
}
