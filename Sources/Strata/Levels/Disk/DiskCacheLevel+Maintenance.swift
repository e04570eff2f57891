import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DiskCacheLevel {
    /// Deletes every entry file in the directory (other processes' too) and
    /// dead writers' temporary files. Does nothing once the level is shut down.
    /// Entries it could not delete (a filesystem turned read-only) read as
    /// misses in this level from then on, as after ``lostCoherence()``.
    public func clear() async {
        guard gate.enter() else { return }
        defer { gate.leave() }
        defer { changes.reportOwnWrite(.all) }
        let path = self.path, changes = self.changes, tombstones = self.tombstones, logger = self.logger
        let clearedAt = EntryFingerprint.nextCreationTime()
        let kept = await offload { [self] in
            // First the tombstone of all: no back-fill whose read began
            // before lands after this clear has passed its file (nor in the
            // directory created again if it was deleted).
            let record = { FileIO.withDeleteLock(path, exclusive: true, { tombstones.record(nil) }) ?? nil }
            var failure = record()
            if failure == ENOENT, recoverDirectory() { failure = record() }
            if let code = failure {
                logger.warning(
                    "cannot leave the clear's tombstone; a back-fill begun before the clear may bring a value back",
                    metadata: ["file": "\(tombstones.path(nil))", "error": "\(DiskCacheError.text(code))"])
            }
            // The delete lock, per file: no other process's checked delete
            // puts back a version after this clear has passed its file (and
            // none waits for the whole scan).
            var kept = 0
            FileIO.withDirectoryLock(path) {
                for name in FileIO.listDirectory(path) {
                    guard let id = EntryID(fileName: name) else { continue }
                    changes.noteOwnDelete(id)
                    let code = FileIO.withDeleteLock(path, exclusive: false, { unlink(path + "/" + name) == 0 ? 0 : errno }) ?? 0
                    if code != 0 {
                        changes.ownDeleteFailed(id)
                        if code != ENOENT { kept += 1 }
                    }
                }
            }
            return kept
        }
        if kept > 0 {
            // Still on disk: not served here, whatever the filesystem allows.
            advanceCoherentSince(to: clearedAt)
            logger.warning("clear could not delete every entry; they read as misses in this level",
                           metadata: ["directory": "\(path)", "kept": "\(kept)"])
        }
        state.withLock { $0.reset() }
    }

    /// Disk entries survive memory warnings; pending access times are written out.
    public func onMemoryWarning() async { flushAccessTimes() }

    /// Deletes the entries whose expiry has passed; returns how many (0 once
    /// the level is shut down). Tombstones too old to matter go too.
    @discardableResult
    public func removeExpired() async -> Int {
        guard gate.enter() else { return 0 }
        defer { gate.leave() }
        tombstones.sweep(entries: path)
        let now = clock.now().nanosecondsSince1970
        let expired = state.withLock { $0.index.expired(now: now) }
        return expired.reduce(0) { removed, item in
            removed + (deleteEntryFile(item.id, expecting: item.entry.fingerprint) == .deleted ? 1 : 0)
        }
    }

    /// Evicts entries (least recently used first, or as the adaptive policy
    /// chooses) until at most `size` bytes remain. Does nothing once the
    /// level is shut down.
    public func trim(toSize size: Int) async {
        guard gate.enter() else { return }
        defer { gate.leave() }
        let victims = state.withLock { Self.noteEvicted($0.index.trim(toSize: max(size, 0)), in: &$0) }
        deleteFiles(victims)
    }

    // MARK: Deleting

    /// Counts `victims` (already out of the index) as evicted; returns the files to delete.
    static func noteEvicted(_ victims: [(id: EntryID, entry: DiskIndexEntry)], in state: inout State)
        -> [(id: EntryID, fingerprint: EntryFingerprint)] {
        victims.map { victim in
            state.dirtyAccess[victim.id] = nil
            state.counters.evictions += 1
            return (victim.id, victim.entry.fingerprint)
        }
    }

    func deleteFiles(_ victims: [(id: EntryID, fingerprint: EntryFingerprint)]) {
        for victim in victims { deleteEntryFile(victim.id, expecting: victim.fingerprint) }
    }

    /// Deletes the entry file of `id` if it still holds the version
    /// `expected` (see ``FileIO/unlinkIfUnchanged(_:expected:directory:)``)
    /// and updates the index to match, while no writer of this process can
    /// replace that file.
    @discardableResult
    func deleteEntryFile(_ id: EntryID, expecting expected: EntryFingerprint, waiting: Bool = true) -> FileIO.UnlinkOutcome {
        let file = file(id)
        if let hook = beforeDeletingFile { hook(file) }
        let step = duringCheckedDelete.map { hook in { (step: CheckedDeleteStep) in hook(file, step) } }
        return entryLocks.withLock(id) {
            let outcome = FileIO.unlinkIfUnchanged(file, expected: expected, directory: path, waiting: waiting, step: step)
            state.withLock { state in
                switch outcome {
                case .deleted, .gone:
                    state.index.remove(id)
                    state.dirtyAccess[id] = nil
                case .replaced:
                    // The index may still describe the version that is gone.
                    if state.index.find(id)?.fingerprint == expected { state.index.remove(id) }
                case .failed:
                    break
                }
            }
            return outcome
        }
    }

    // MARK: Directory and index

    /// Creates the directory again if it was deleted, emptying the index
    /// (its files went with it). Returns whether the directory exists now.
    /// Never once the level is being shut down: its owner deletes it next.
    @discardableResult
    func recoverDirectory() -> Bool {
        directoryRecovery.withLock { _ in
            if gate.isShut { return FileIO.directoryExists(path) }
            if FileIO.directoryExists(path) { return true }
            if let code = FileIO.makeDirectory(path) {
                logger.error("cache directory is gone and cannot be created",
                             metadata: ["directory": "\(path)", "error": "\(DiskCacheError.text(code))"])
                return false
            }
            // Its tombstones went with it: back-fills begun before are declined (`DiskTombstones`).
            tombstones.make()
            state.withLock { state in
                state.reset()
                state.counters.directoryRecreations += 1
            }
            logger.warning("cache directory was deleted; created it again", metadata: ["directory": "\(path)"])
            changes.directoryRecreated()
            return true
        }
    }

    /// Rebuilds the index from the directory: corrupt entries and dead
    /// writers' temporary files are deleted, expired entries dropped, and the
    /// rest ordered by their recorded last access. Does nothing once the
    /// level is shut down.
    package func rebuildIndex() {
        guard gate.enter() else { return }
        defer { gate.leave() }
        let now = clock.now().nanosecondsSince1970
        var found: [(id: EntryID, header: DiskEntryHeader, entry: DiskIndexEntry)] = []
        var corrupt = 0
        tombstones.sweep(entries: path)
        FileIO.withDirectoryLock(path) {
            for name in FileIO.listDirectory(path) {
                let file = path + "/" + name
                if let owner = FileIO.temporaryOwner(name) {
                    if !FileIO.processIsAlive(owner) { unlink(file) }
                    continue
                }
                guard let id = EntryID(fileName: name) else { continue }  // not ours: leave it
                let prefix: Data, size: Int
                switch FileIO.readPrefix(file, count: DiskEntryHeader.size) {
                case .vanished: continue  // removed by another process meanwhile: not corrupt
                case .unreadable: continue  // permissions or I/O: leave it, it is not provably ours to delete
                case .bytes(let bytes, let length): (prefix, size) = (bytes, length)
                }
                let fingerprint = EntryFingerprint(prefix: prefix, size: size)
                guard let header = prefix.withUnsafeBytes({ DiskEntryHeader.parse($0) }), header.fileSize == size else {
                    let outcome = entryLocks.withLock(id) { FileIO.unlinkIfUnchanged(file, expected: fingerprint, directory: path) }
                    if outcome == .deleted { corrupt += 1 }
                    continue
                }
                if header.expiresAt != 0 && now >= header.expiresAt {
                    _ = entryLocks.withLock(id) { FileIO.unlinkIfUnchanged(file, expected: fingerprint, directory: path) }
                    continue
                }
                found.append((id, header, DiskIndexEntry(size: size, expiresAt: header.expiresAt, fingerprint: fingerprint)))
            }
        }
        found.sort { $0.header.lastAccess < $1.header.lastAccess }
        // Keep the most recently used entries that fit (what LRU keeps, under
        // either policy); the older rest is evicted before the policy sees it.
        var firstKept = found.count, kept = 0
        while firstKept > 0, kept + found[firstKept - 1].entry.size <= capacity {
            firstKept -= 1
            kept += found[firstKept].entry.size
        }
        let victims = state.withLock { state in
            state.reset()
            state.counters.corruptRemoved += corrupt
            // The last inserted is the most recent.
            for item in found[firstKept...] { state.index.insert(item.id, item.entry, restored: true) }
            let dropped = found[..<firstKept].map { (id: $0.id, entry: $0.entry) }
            return Self.noteEvicted(dropped, in: &state)
        }
        deleteFiles(victims)
    }

    /// Writes recorded access times into the entries' headers, so the LRU
    /// order survives a restart. Runs by itself every 256 reads, and at
    /// ``shutdown()`` for the last time.
    package func flushAccessTimes() {
        guard gate.enter() else { return }
        defer { gate.leave() }
        writeAccessTimes()
    }

    /// The body of ``flushAccessTimes()``, whether or not the level is shut down.
    func writeAccessTimes() {
        let dirty = state.withLock { state -> [EntryID: Int64] in
            defer { state.dirtyAccess = [:] }
            return state.dirtyAccess
        }
        for (id, time) in dirty {
            FileIO.writeInt64(time, at: DiskEntryHeader.lastAccessOffset, path: file(id))
        }
    }

    func flushAccessTimesSoon() {
        diskIOQueue.async { [weak self] in self?.flushAccessTimes() }
    }
}
