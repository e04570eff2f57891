import Logging
import Strata

/// Writes accepted during an outage (`outageBacklog:`), replayed once Redis
/// answers again (see ``RedisOutageBacklog``).
///
/// A set, remove or clear that fails because Redis cannot be reached (refused,
/// unavailable, closed, timed out) is kept, newest per key, and does not
/// throw: the write will land. So are the writes after it, until the backlog
/// is empty (order per key). A task probes Redis (`PING`, 50 ms doubling to
/// 2 s apart) and replays the writes once it answers: the clear first, then
/// each key's newest write, reported to the compositions of this process as
/// writes from nowhere (they drop the key). Until a write lands, this level
/// answers it to reads (the writer never reads the value it replaced). The
/// levels above in every process dropped what they held when contact was
/// lost and again when it came back. Kept in memory: a process that exits
/// (or shuts the level down) before Redis is back loses them, and a key
/// written by another process during a partition gets this process's write
/// after it (last writer wins).
extension RedisCacheLevel {
    /// Writes kept for replay now, or being replayed (a pending clear counts as one).
    public var writesAwaitingReplay: Int { backlog?.pending ?? 0 }
    /// Writes replayed so far.
    public var writesReplayed: Int { backlog?.replayed ?? 0 }
    /// Writes dropped: the backlog was full (the oldest go first), or Redis refused one on replay.
    public var writesDroppedFromBacklog: Int { backlog?.dropped ?? 0 }

    /// Keeps `write` for replay if `error` says Redis could not be reached
    /// and the level has a backlog; otherwise rethrows it.
    func keepForReplay(_ write: RedisOutageBacklog<Key, Value>.Write, of key: Key, after error: any Error) throws {
        guard let backlog, Self.isUnreachable(error) else { throw error }
        keep(write, of: key, in: backlog)
    }

    func keep(_ write: RedisOutageBacklog<Key, Value>.Write, of key: Key, in backlog: RedisOutageBacklog<Key, Value>) {
        let name = redisKey(key)
        echoes.forget(name)
        if backlog.keep(write, of: key, name: name) { startReplay() }
    }

    /// The write of `name` still waiting for replay, if any.
    func pendingWrite(_ name: [UInt8]) -> RedisOutageBacklog<Key, Value>.Write? {
        guard let backlog, backlog.isActive else { return nil }
        return backlog.pendingWrite(name)
    }

    /// Redis could not be reached: the write may be kept for later.
    static func isUnreachable(_ error: any Error) -> Bool {
        switch error as? RedisError {
        case .connectionFailed, .unavailable, .connectionClosed, .timeout: true
        default: false
        }
    }

    /// Starts the probe-and-replay task (one at a time: see
    /// ``RedisOutageBacklog/keep(_:of:name:)``). It holds the level only
    /// while it replays, and ends once the backlog is empty or the level is
    /// shut down.
    func startReplay() {
        Task.detached { [weak self] in
            var pause = Duration.milliseconds(50)
            while true {
                try? await Task.sleep(for: pause)  // a backoff between probes, not a wait for an event
                guard let level = self, let backlog = level.backlog else { return }
                if backlog.isStopped { _ = backlog.finishIfEmpty(); return }
                guard await level.replayRound(backlog) else {
                    pause = min(pause * 2, .seconds(2))
                    continue
                }
                pause = .milliseconds(50)
                if backlog.finishIfEmpty() { return }
            }
        }
    }

    /// One round: a `PING`, then everything kept so far. `false` if Redis
    /// could not be reached (what was not replayed goes back).
    private func replayRound(_ backlog: RedisOutageBacklog<Key, Value>) async -> Bool {
        guard (try? await client.sendPastBreaker([RedisCommandName.ping])) != nil else { return false }
        let (clear, entries) = backlog.take()
        if clear {
            do {
                _ = try await reporting(.all, partial: true) { try await clearPrefixNow() }
                backlog.clearLanded()
            } catch {
                backlog.putBack()
                return !Self.isUnreachable(error)
            }
        }
        for (name, entry) in entries {
            // A clear or a newer write of the key kept meanwhile replaces this one.
            guard backlog.isCurrent(name, entry.sequence) else { continue }
            do {
                switch entry.write {
                case .set(let value, let expiresAt): try await setNow(value, forKey: entry.key, expiresAt: expiresAt)
                case .remove: try await removeNow(entry.key)
                }
                backlog.landed(name)
            } catch where Self.isUnreachable(error) {
                backlog.putBack()
                return false
            } catch {
                // Refused for good (a read-only replica, a missing permission): dropped, as a set would have thrown.
                backlog.landed(name, dropped: true)
                warnings.replayRefused.warn(["key": "\(describeKey(entry.key))", "error": "\(error)"])
            }
        }
        return true
    }
}
