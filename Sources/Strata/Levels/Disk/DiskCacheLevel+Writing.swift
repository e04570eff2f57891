import CStrataSystem
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension DiskCacheLevel {
    public func set(_ value: Value, forKey key: Key) async throws {
        try await set(value, forKey: key, expiresAt: nil)
    }

    /// Stores `value` for `key`, replacing the entry there.
    ///
    /// **What the listeners in this process hear** (the directory's watch
    /// does not report this level's own writes; the other compositions over
    /// it hear of them here): a set that stored its value reports the key
    /// once, with the write's ``CacheWriteOrigin``. A set that fails (a value
    /// that does not encode or is larger than the capacity, a full disk, a
    /// directory it may not write) first deletes the entry it would have
    /// replaced, so that no older value stays readable, and then reports by
    /// what is on disk after that: the key once, to every listener (an empty
    /// origin: the compositions the set passed through hold a value the disk
    /// does not), if the older entry was deleted (or the delete failed in a
    /// way that leaves it unknown whether the file is still there); nothing
    /// if there was none or it could not be deleted (it is still there,
    /// readable as before), since then the disk has not changed.
    ///
    /// Once the level is shut down, throws ``DiskCacheError/shutDown(path:)``
    /// and writes (and reports) nothing.
    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await write(value, forKey: key, expiresAt: expiresAt, backfill: false)
    }

    /// A back-fill keeps the lower entry's deadline, capped at this level's TTL.
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try await write(fill.value, forKey: key, expiresAt: fill.expiresAt, backfill: true)
    }

    private func write(_ value: Value, forKey key: Key, expiresAt: CacheInstant?, backfill: Bool) async throws {
        try Task.checkCancellation()
        guard gate.enter() else { throw DiskCacheError.shutDown(path: path) }
        defer { gate.leave() }
        let bytes = keyBytes(key)
        let id = EntryID(keyBytes: bytes)
        // Whatever refuses this value below also drops the value it replaces,
        // so a failed set never leaves the older value readable.
        let encoded: Data
        do { encoded = try codec.encode(value) } catch {
            dropAfterFailedSet(key)
            throw CodecError.encodingFailed(codec: codec.name, reason: "\(error)")
        }
        let now = clock.now()
        // 0 means "never"; a deadline at or before 1970 is already past.
        let deadline = StoredDeadline.resolve(given: expiresAt, backfill: backfill) { defaultTTL.map { now.advanced(by: $0) } }
            .map { max($0.nanosecondsSince1970, 1) } ?? 0
        let entry = DiskEntryHeader.encode(key: bytes, value: encoded, expiresAt: deadline,
                                           now: now.nanosecondsSince1970,
                                           createdAt: EntryFingerprint.nextCreationTime())
        guard entry.count <= capacity else {
            dropAfterFailedSet(key)
            throw DiskCacheError.valueTooLarge(size: entry.count, capacity: capacity)
        }
        let record = DiskIndexEntry(size: entry.count, expiresAt: deadline,
                                    fingerprint: entry.withUnsafeBytes { EntryFingerprint(prefix: $0, size: entry.count) })
        changes.note(id, key)
        var outcome = await store(entry, id: id, record: record, backfill: backfill)
        if case .failed(ENOENT) = outcome, recoverDirectory() {
            outcome = await store(entry, id: id, record: record, backfill: backfill)  // the directory was deleted: once more
        }
        switch outcome {
        case .declined:
            throw BackfillDeclined()
        case .failed(let code):
            dropAfterFailedSet(key)
            throw DiskCacheError.writeFailed(path: file(id), errno: code)
        case .stored(let victims):
            // The value set is in the levels above too: after the rename, make
            // sure the directory it went to is watched (see ``DiskChangeFeed/ensureWatching()``).
            changes.ensureWatching()
            deleteFiles(victims)
            changes.reportOwnWrite(.key(key))
        }
    }

    /// After a failed set: deletes the entry the set would have replaced and
    /// reports the key (to every listener) only if that deleted it, or may
    /// have (see ``set(_:forKey:expiresAt:)``).
    private func dropAfterFailedSet(_ key: Key) {
        switch deleteEntry(key).outcome {
        case .deleted, .unknown: changes.reportOwnWrite(.key(key), origin: CacheWriteOrigin())
        case .absent, .kept: break
        }
    }

    enum StoreOutcome: Sendable {
        case stored(victims: [(id: EntryID, fingerprint: EntryFingerprint)])
        case failed(errno: Int32)
        /// A back-fill found a value another writer stored since (or could
        /// not tell): nothing was written.
        case declined
    }

    /// Writes `entry` to a temporary file and puts it in place of the
    /// entry's file (a set) or where there is none (a back-fill, see
    /// ``place(_:id:record:replacing:)``).
    ///
    /// A back-fill replaces nothing another writer stored after the read
    /// missed (``Backfill``): another process's set, or another level's on
    /// this directory, that landed before the back-fill's rename, reported or
    /// not. Only a file that read as a miss here and holds no newer value is
    /// replaced: expired, or written before this level lost coherence; it is
    /// deleted (checked, so never a version written since) and the rename
    /// tried once more. A file system that cannot rename without replacing
    /// declines every back-fill (it only saves a later read).
    private func store(_ entry: [UInt8], id: EntryID, record: DiskIndexEntry, backfill: Bool) async -> StoreOutcome {
        let directory = path
        let written = entry.count <= Self.inlineIOLimit
            ? FileIO.writeTemporary(entry, in: directory)
            : await offload { FileIO.writeTemporary(entry, in: directory) }
        guard case .written(let temp) = written else {
            if case .failed(let code) = written { return .failed(errno: code) }
            return .failed(errno: EIO)
        }
        var outcome = place(temp, id: id, record: record, replacing: !backfill)
        if case .failed(EEXIST) = outcome, backfill, let stale = staleVersion(id),
           [.deleted, .gone].contains(deleteEntryFile(id, expecting: stale, waiting: false)) {
            outcome = place(temp, id: id, record: record, replacing: false)
        }
        switch outcome {
        case .stored: return outcome
        case .failed(let code) where backfill && [EEXIST, EINVAL, ENOSYS].contains(code):
            unlink(temp)
            return .declined
        case .failed, .declined:
            unlink(temp)
            return outcome
        }
    }

    /// Renames `temp` to `id`'s file and records it (evicting for it) while
    /// no deleter of this process can look at that file. Without `replacing`,
    /// only if no file is there (`EEXIST` if one is), and under the shared
    /// delete lock: another process's checked delete that moved a newer
    /// version aside to put it back must find no older one in its place.
    private func place(_ temp: String, id: EntryID, record: DiskIndexEntry, replacing: Bool) -> StoreOutcome {
        let file = file(id)
        return entryLocks.withLock(id) {
            changes.noteOwnRename(id, record.fingerprint)
            let code = replacing
                ? (rename(temp, file) == 0 ? 0 : errno)
                : FileIO.withDeleteLock(path, exclusive: false) { strata_rename_noreplace(temp, file) == 0 ? 0 : errno } ?? EAGAIN
            guard code == 0 else {
                changes.ownRenameFailed(id, record.fingerprint)
                return .failed(errno: code)
            }
            return state.withLock { state in
                state.index.insert(id, record)
                return .stored(victims: Self.noteEvicted(state.index.evictOverCapacity(), in: &state))
            }
        }
    }

    /// The version in `id`'s file if it reads as a miss here for a reason a
    /// back-fill may end: expired, or written before this level lost coherence.
    private func staleVersion(_ id: EntryID) -> EntryFingerprint? {
        guard case .bytes(let prefix, let size) = FileIO.readPrefix(file(id), count: DiskEntryHeader.size),
              let header = prefix.withUnsafeBytes({ DiskEntryHeader.parse($0) }) else { return nil }
        let expired = header.expiresAt != 0 && clock.now().nanosecondsSince1970 >= header.expiresAt
        guard expired || header.createdAt < coherentSince.load(ordering: .relaxed) else { return nil }
        return EntryFingerprint(prefix: prefix, size: size)
    }

    /// Deletes `key`'s entry.
    ///
    /// Always reported to the listeners in this process (with the write's
    /// ``CacheWriteOrigin``): when this remove deleted the entry, when there
    /// was none (a level above elsewhere may still hold a value read before
    /// this level evicted it), and when it could not delete it (`EACCES`, a
    /// read-only filesystem), which also throws
    /// ``DiskCacheError/writeFailed(path:errno:)``. The entry left on disk is
    /// still read, so the levels above must not keep anything else: a
    /// composition removes the entry of a set that failed here, and the
    /// levels above took that set's value (they drop it and read the older
    /// entry again).
    ///
    /// Once the level is shut down, throws ``DiskCacheError/shutDown(path:)``
    /// and deletes (and reports) nothing: a file left in a directory that
    /// outlives the level is still there.
    public func remove(_ key: Key) async throws {
        guard gate.enter() else { throw DiskCacheError.shutDown(path: path) }
        defer { gate.leave() }
        let (file, outcome) = deleteEntry(key)
        switch outcome {
        case .deleted, .absent:
            changes.reportOwnWrite(.key(key))
        case .kept(let code):
            changes.reportOwnWrite(.key(key))
            throw DiskCacheError.writeFailed(path: file, errno: code)
        case .unknown(let code):
            // Not deleted, yet not found there either: reported, as anything
            // ambiguous is (a spare invalidation costs a re-read).
            changes.reportOwnWrite(.key(key))
            throw DiskCacheError.writeFailed(path: file, errno: code)
        }
    }

    /// What ``deleteEntry(_:)`` did.
    enum DeleteOutcome: Equatable {
        /// The entry's file was deleted.
        case deleted
        /// There was no file to delete.
        case absent
        /// The delete failed with this errno and the file is still there.
        case kept(errno: Int32)
        /// The delete failed with this errno and whether the file is still
        /// there cannot be told.
        case unknown(errno: Int32)
    }

    /// Deletes `key`'s entry file and forgets it, reporting nothing (the
    /// caller decides what to report from the outcome).
    func deleteEntry(_ key: Key) -> (file: String, outcome: DeleteOutcome) {
        let id = EntryID(keyBytes: keyBytes(key))
        let file = file(id)
        let directory = path
        let outcome: DeleteOutcome = entryLocks.withLock(id) {
            changes.noteOwnDelete(id)
            // Not while another process's checked delete has moved a version
            // aside: it may put that version back (see ``FileIO/unlinkIfUnchanged(_:expected:directory:waiting:step:)``).
            let outcome: DeleteOutcome
            if FileIO.withDeleteLock(directory, exclusive: false, { unlink(file) }) == 0 {
                outcome = .deleted
            } else {
                let code = errno
                changes.ownDeleteFailed(id)
                if code == ENOENT {
                    outcome = .absent
                } else {
                    var info = stat()
                    if lstat(file, &info) == 0 { return .kept(errno: code) }
                    // Gone all the same (another writer deleted it meanwhile).
                    if errno == ENOENT || errno == ENOTDIR { outcome = .absent } else { return .unknown(errno: code) }
                }
            }
            state.withLock { state in
                state.index.remove(id)
                state.dirtyAccess[id] = nil
            }
            return outcome
        }
        return (file, outcome)
    }
}
