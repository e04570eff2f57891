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
    /// This process's listeners hear it here (the watch misses own writes): a
    /// stored set reports the key once, with the write's `CacheWriteOrigin`.
    /// A failed set (encoding, over capacity, disk full, directory not writable)
    /// first deletes the entry it would replace (no older value stays readable;
    /// one the filesystem will not let go, read-only or `EACCES`, stays on disk
    /// and reads as a miss in this level from then on), then reports the key
    /// once to every listener (empty origin: compositions it passed through
    /// hold a value the disk does not) if there was such an entry; nothing if
    /// there was none.
    /// Once shut down, throws ``DiskCacheError/shutDown(path:)`` and writes
    /// (and reports) nothing.
    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await write(value, forKey: key, expiresAt: expiresAt, backfill: nil)
    }

    /// A back-fill keeps the lower entry's deadline, capped at this level's
    /// TTL. It replaces no entry, and is declined (``BackfillDeclined``) if
    /// its key was removed, or the directory cleared, by any process since
    /// its read began (its tombstones: see docs/disk-level.md), or recently when it does not say.
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        try await write(fill.value, forKey: key, expiresAt: fill.expiresAt,
                        backfill: BackfillLanding(readStart: fill.readStartedAt.map(DiskTombstones.wallTime(of:))))
    }

    /// A back-fill's landing: when its read began, on the wall clock (`nil`: unknown).
    struct BackfillLanding {
        var readStart: Int64?
    }

    private func write(_ value: Value, forKey key: Key, expiresAt: CacheInstant?, backfill landing: BackfillLanding?) async throws {
        let backfill = landing != nil
        try Task.checkCancellation()
        guard gate.enter() else { throw DiskCacheError.shutDown(path: path) }
        defer { gate.leave() }
        let bytes = keyBytes(key)
        let id = EntryID(keyBytes: bytes)
        // Whatever refuses this value below also drops the value it replaces.
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
        var outcome = await store(entry, id: id, record: record, landing: landing)
        if case .failed(ENOENT) = outcome, recoverDirectory() {
            outcome = await store(entry, id: id, record: record, landing: landing)  // the directory was deleted: once more
        }
        switch outcome {
        case .declined:
            throw BackfillDeclined()
        case .failed(let code):
            dropAfterFailedSet(key)
            throw DiskCacheError.writeFailed(path: file(id), errno: code)
        case .stored(let victims):
            // The value is above too: see ``DiskChangeFeed/ensureWatching()``.
            changes.ensureWatching()
            deleteFiles(victims)
            changes.reportOwnWrite(.key(key))
        }
    }

    /// After a failed set: deletes the entry it would have replaced (or
    /// makes it a miss here, if it cannot: ``deleteEntry(_:)``), reporting
    /// the key if there was one (``set(_:forKey:expiresAt:)``).
    private func dropAfterFailedSet(_ key: Key) {
        switch deleteEntry(key).outcome {
        case .deleted, .kept, .unknown: changes.reportOwnWrite(.key(key), origin: CacheWriteOrigin())
        case .absent: break
        }
    }

    enum StoreOutcome: Sendable {
        case stored(victims: [(id: EntryID, fingerprint: EntryFingerprint)])
        case failed(errno: Int32)
        /// A back-fill found a newer value (or could not tell): nothing written.
        case declined
    }

    /// Writes `entry` to a temporary file and renames it over the entry's file
    /// (a set) or where there is none (a back-fill: ``place(_:id:record:replacing:)``).
    /// A back-fill replaces nothing another writer stored after its read missed
    /// (``Backfill``), reported or not: only a file that reads as a miss here
    /// (expired, or older than lost coherence) is deleted, checked, and the
    /// rename retried once. Where rename cannot refuse to replace, back-fills
    /// are declined (costing only a later read).
    private func store(_ entry: [UInt8], id: EntryID, record: DiskIndexEntry, landing: BackfillLanding?) async -> StoreOutcome {
        let backfill = landing != nil
        let directory = path
        let written = entry.count <= Self.inlineIOLimit
            ? FileIO.writeTemporary(entry, in: directory)
            : await offload { FileIO.writeTemporary(entry, in: directory) }
        guard case .written(let temp) = written else {
            if case .failed(let code) = written { return .failed(errno: code) }
            return .failed(errno: EIO)
        }
        var outcome = place(temp, id: id, record: record, landing: landing)
        if case .failed(EEXIST) = outcome, backfill, let stale = staleVersion(id),
           [.deleted, .gone].contains(deleteEntryFile(id, expecting: stale, waiting: false)) {
            outcome = place(temp, id: id, record: record, landing: landing)
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

    /// Renames `temp` to `id`'s file and records it (evicting for it), with no
    /// deleter of this process at that file. A back-fill's `landing` only if
    /// no file is there (`EEXIST`) and no tombstone forbids it (declined),
    /// under the shared delete lock: another process's checked delete putting
    /// back a newer version it moved aside must find no older one, and a
    /// remove (its tombstone and delete) falls before or after, not between.
    private func place(_ temp: String, id: EntryID, record: DiskIndexEntry, landing: BackfillLanding?) -> StoreOutcome {
        let file = file(id)
        return entryLocks.withLock(id) {
            changes.noteOwnRename(id, record.fingerprint)
            let refused: StoreOutcome?
            if let landing {
                refused = land(temp, at: file, id: id, landing)
            } else {
                refused = rename(temp, file) == 0 ? nil : .failed(errno: errno)
            }
            if let refused {
                changes.ownRenameFailed(id, record.fingerprint)
                return refused
            }
            return state.withLock { state in
                state.index.insert(id, record)
                // Written after the key was voided: its mark stops nothing now.
                if let voided = state.voided[id], case .entry(let createdAt, _, _) = record.fingerprint, createdAt >= voided {
                    state.voided[id] = nil
                }
                return .stored(victims: Self.noteEvicted(state.index.evictOverCapacity(), in: &state))
            }
        }
    }

    /// Renames a back-fill's `temp` to `file` if none is there and no
    /// tombstone forbids it, under the shared delete lock; `nil` once renamed,
    /// else why not (a tombstone's refusal is a decline, not a failure).
    private func land(_ temp: String, at file: String, id: EntryID, _ landing: BackfillLanding) -> StoreOutcome? {
        let refused = FileIO.withDeleteLock(path, exclusive: false) { () -> StoreOutcome? in
            if tombstones.forbid(id, readStart: landing.readStart) { return .declined }
            return strata_rename_noreplace(temp, file) == 0 ? nil : .failed(errno: errno)
        }
        guard let refused else { return .failed(errno: EAGAIN) }  // no lock
        return refused
    }

    /// The version in `id`'s file if a back-fill may replace it: expired, or older than lost coherence
    /// (or than a write of its key that could not reach it).
    private func staleVersion(_ id: EntryID) -> EntryFingerprint? {
        guard case .bytes(let prefix, let size) = FileIO.readPrefix(file(id), count: DiskEntryHeader.size),
              let header = prefix.withUnsafeBytes({ DiskEntryHeader.parse($0) }) else { return nil }
        let expired = header.expiresAt != 0 && clock.now().nanosecondsSince1970 >= header.expiresAt
        guard expired || predatesCoherence(id, createdAt: header.createdAt) else { return nil }
        return EntryFingerprint(prefix: prefix, size: size)
    }

    /// Deletes `key`'s entry.
    ///
    /// Always reported to this process's listeners (with the write's
    /// `CacheWriteOrigin`): when deleted; when absent (a level above elsewhere
    /// may hold a value read before this level evicted it); and when it cannot
    /// be deleted (`EACCES`, read-only filesystem; also throws
    /// ``DiskCacheError/writeFailed(path:errno:)``): the entry stays on disk
    /// and reads as a miss in this level from then on, and after a set failed
    /// here the levels above hold its value, which they must drop.
    /// Once shut down, throws ``DiskCacheError/shutDown(path:)`` and deletes
    /// (and reports) nothing: a file in a directory outliving the level stays.
    public func remove(_ key: Key) async throws {
        guard gate.enter() else { throw DiskCacheError.shutDown(path: path) }
        defer { gate.leave() }
        var (file, outcome, tombstoneFailure) = deleteEntry(key)
        if tombstoneFailure == ENOENT, recoverDirectory() {
            // The directory was deleted: created again, with the tombstone a
            // landing begun before (which would create it too) must find.
            (file, outcome, tombstoneFailure) = deleteEntry(key)
        }
        switch outcome {
        case .deleted, .absent:
            changes.reportOwnWrite(.key(key))
            if let tombstoneFailure {
                // Deleted, but a back-fill begun before may bring it back: said.
                throw DiskCacheError.writeFailed(path: tombstones.path(EntryID(keyBytes: keyBytes(key))), errno: tombstoneFailure)
            }
        case .kept(let code):
            changes.reportOwnWrite(.key(key))
            throw DiskCacheError.writeFailed(path: file, errno: code)
        case .unknown(let code):
            // Neither deleted nor found: reported, as anything ambiguous is.
            changes.reportOwnWrite(.key(key))
            throw DiskCacheError.writeFailed(path: file, errno: code)
        }
    }

    /// What ``deleteEntry(_:)`` did.
    enum DeleteOutcome: Equatable {
        case deleted
        case absent
        /// The delete failed with this errno and the file is still there.
        case kept(errno: Int32)
        /// The delete failed with this errno; whether the file remains is unknown.
        case unknown(errno: Int32)
    }

    /// Leaves `key`'s tombstone (``DiskTombstones``), then deletes its entry
    /// file and forgets it; the caller reports by the outcome. `tombstoneFailure`:
    /// the errno when no tombstone could be left. An entry file it cannot
    /// delete (`.kept`, `.unknown`) is voided in this level instead
    /// (``voidEntries(of:before:)``): the write that came for it never reads it.
    func deleteEntry(_ key: Key) -> (file: String, outcome: DeleteOutcome, tombstoneFailure: Int32?) {
        let id = EntryID(keyBytes: keyBytes(key))
        let file = file(id)
        let directory = path, tombstones = self.tombstones
        var tombstoneFailure: Int32?
        let outcome: DeleteOutcome = entryLocks.withLock(id) {
            changes.noteOwnDelete(id)
            // Exclusive: not while another process's checked delete has moved
            // a version aside (it may put that version back, see
            // ``FileIO/unlinkIfUnchanged(_:expected:directory:waiting:step:)``),
            // nor between a back-fill's look at the tombstones and its landing.
            let outcome: DeleteOutcome
            if FileIO.withDeleteLock(directory, exclusive: true, { () -> Int32 in
                tombstoneFailure = tombstones.record(id)
                return unlink(file)
            }) == 0 {
                outcome = .deleted
            } else {
                let code = errno
                changes.ownDeleteFailed(id)
                if code == ENOENT {
                    outcome = .absent
                } else {
                    var info = stat()
                    let found = lstat(file, &info) == 0
                    if !found && (errno == ENOENT || errno == ENOTDIR) {
                        outcome = .absent  // gone all the same (another writer deleted it meanwhile)
                    } else {
                        // Still there, or cannot tell: never to be read here again.
                        voidEntries(of: id, before: EntryFingerprint.nextCreationTime())
                        return found ? .kept(errno: code) : .unknown(errno: code)
                    }
                }
            }
            state.withLock { state in
                state.index.remove(id)
                state.dirtyAccess[id] = nil
            }
            return outcome
        }
        return (file, outcome, tombstoneFailure)
    }
}
