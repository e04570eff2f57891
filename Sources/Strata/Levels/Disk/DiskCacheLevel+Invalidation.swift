import Foundation

extension DiskCacheLevel {
    /// Subscribes `listener` to entries that other writers on this directory
    /// (other processes, or other disk levels in this one) replace or delete.
    /// The first registration starts an inotify watch (one inotify instance
    /// serves every disk level of the process). If the directory cannot be
    /// watched (the per-user watch limit reached), a warning is logged and,
    /// until it can be, every read that finds an entry and every write
    /// reports that anything may have changed: the levels above keep
    /// nothing from this level, so they never serve what another writer
    /// replaced unheard.
    public func subscribe(_ listener: @escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription {
        let (subscription, failure) = changes.add(listener, path: path) { EntryFingerprint.ofFile($0) }
        if let failure {
            logger.warning("cannot watch the cache directory; levels above keep nothing from it until it can be watched",
                           metadata: ["directory": "\(path)", "error": "\(DiskCacheError.text(failure))"])
        }
        return subscription
    }

    /// A stack that kept this level coherent with a level below it that
    /// reports changes (`disk + redis`) is gone: nothing tells this level of
    /// those changes any more. Every entry written until now reads as a miss
    /// from now on, here and in every disk level opened on the directory
    /// later (the mark is kept in it, `coherenceMarkName`). The files stay:
    /// levels already open elsewhere may be kept coherent by stacks of their
    /// own, and a back-fill replaces them.
    public func lostCoherence() {
        let now = EntryFingerprint.nextCreationTime()
        advanceCoherentSince(to: now)
        let mark = path + "/" + Self.coherenceMarkName
        // Read, compared and written under the directory's lock: two levels
        // (or processes) losing coherence at once leave the later instant.
        // Private (0600) as the entries are: written as they are, then renamed.
        let failure: Int32? = FileIO.withDirectoryLock(path) {
            if let kept = readCoherenceMark(), kept >= now { return nil }
            return FileIO.writeAtomically(Array(String(now).utf8), to: mark, directory: path)
        }
        if let failure {
            logger.warning("cannot keep the coherence mark; disk levels opened on this directory later may serve entries written before it",
                           metadata: ["file": "\(mark)", "error": "\(DiskCacheError.text(failure))"])
        }
    }

    /// Entries created before `instant` read as misses in this level from now on.
    /// Only forward: an earlier call finishing later must not move it back.
    func advanceCoherentSince(to instant: Int64) {
        raiseCoherentSince(to: instant)
        // Keys voided before it need no mark of their own any more.
        state.withLock { state in
            if !state.voided.isEmpty { state.voided = state.voided.filter { $0.value > instant } }
        }
    }

    /// ``advanceCoherentSince(to:)``'s move of the mark alone (no lock taken).
    private func raiseCoherentSince(to instant: Int64) {
        var current = coherentSince.load(ordering: .relaxed)
        while current < instant {
            let (exchanged, original) = coherentSince.compareExchange(expected: current, desired: instant, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
    }

    /// The most keys voided one by one (``voidEntries(of:before:)``).
    package static var voidedKeyLimit: Int { 4096 }

    /// A write of `id`'s key could not reach its entry (a read-only
    /// filesystem, `EACCES`): the key's entries created before `instant`
    /// read as misses in this level from now on, so it never answers the
    /// value that write replaced or removed. Kept in memory (nothing can be
    /// written to the directory), per key for up to ``voidedKeyLimit``
    /// keys; one more moves the whole level's mark instead (every entry from
    /// before it a miss here, as after a clear that could delete nothing:
    /// slower, never stale) and warns.
    func voidEntries(of id: EntryID, before instant: Int64) {
        let collapsed = state.withLock { state -> Int? in
            state.voided[id] = max(state.voided[id] ?? 0, instant)
            guard state.voided.count > Self.voidedKeyLimit else { return nil }
            // The mark first: no read between sees neither.
            raiseCoherentSince(to: state.voided.values.max() ?? instant)
            defer { state.voided = [:] }
            return state.voided.count
        }
        if let collapsed {
            logger.warning("too many writes could not reach the cache directory; every entry from before now reads as a miss in this level",
                           metadata: ["directory": "\(path)", "keys": "\(collapsed)"])
        }
    }

    /// Whether an entry of `id` created at `createdAt` reads as a miss here:
    /// older than the level's mark or than the key's own (`voided`, read by
    /// the caller under the lock with what else it needs).
    func predatesCoherence(createdAt: Int64, voided: Int64?) -> Bool {
        createdAt < max(coherentSince.load(ordering: .relaxed), voided ?? 0)
    }

    /// ``predatesCoherence(createdAt:voided:)``, looking the key's mark up.
    func predatesCoherence(_ id: EntryID, createdAt: Int64) -> Bool {
        predatesCoherence(createdAt: createdAt, voided: state.withLock { $0.voided[id] })
    }

    /// The file in the directory that keeps the latest ``lostCoherence()``'s instant.
    static var coherenceMarkName: String { ".strata-coherent-since" }

    /// The instant kept in the directory's mark, if any.
    func readCoherenceMark() -> Int64? {
        guard let data = FileManager.default.contents(atPath: path + "/" + Self.coherenceMarkName) else { return nil }
        return Int64(String(decoding: data.prefix(32), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// `true` while levels above listen to this one and its directory is not
    /// watched: it was deleted or moved and no directory is back at the path,
    /// or the per-user inotify watch limit is reached. Meanwhile the levels
    /// above keep nothing from this level (each read and write tries to watch
    /// again). `false` when watched, and when nothing listens.
    public var isUnwatched: Bool { changes.isWatchLost }
}

