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

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try Task.checkCancellation()
        // The directory's watch does not report this level's own writes; the
        // other compositions over it in this process hear of them here.
        defer { changes.listeners.reportLocalWrite(.key(key)) }
        let bytes = keyBytes(key)
        let id = EntryID(keyBytes: bytes)
        // Whatever refuses this value below also drops the value it replaces,
        // so a failed set never leaves the older value readable.
        let encoded: Data
        do { encoded = try codec.encode(value) } catch {
            try? await remove(key)
            throw CodecError.encodingFailed(codec: codec.name, reason: "\(error)")
        }
        let now = clock.now()
        // 0 means "never"; a deadline at or before 1970 is already past.
        let deadline = StoredDeadline.resolve(given: expiresAt) { defaultTTL.map { now.advanced(by: $0) } }
            .map { max($0.nanosecondsSince1970, 1) } ?? 0
        let entry = DiskEntryHeader.encode(key: bytes, value: encoded, expiresAt: deadline,
                                           now: now.nanosecondsSince1970,
                                           createdAt: EntryFingerprint.nextCreationTime())
        guard entry.count <= capacity else {
            try? await remove(key)
            throw DiskCacheError.valueTooLarge(size: entry.count, capacity: capacity)
        }
        let record = DiskIndexEntry(size: entry.count, expiresAt: deadline,
                                    fingerprint: entry.withUnsafeBytes { EntryFingerprint(prefix: $0, size: entry.count) })
        changes.note(id, key)
        var outcome = await store(entry, id: id, record: record)
        if case .failed(ENOENT) = outcome, recoverDirectory() {
            outcome = await store(entry, id: id, record: record)  // the directory was deleted: once more
        }
        switch outcome {
        case .failed(let code):
            try? await remove(key)
            throw DiskCacheError.writeFailed(path: file(id), errno: code)
        case .stored(let victims):
            // The value set is in the levels above too: after the rename, make
            // sure the directory it went to is watched (see ``DiskChangeFeed/ensureWatching()``).
            changes.ensureWatching()
            deleteFiles(victims)
        }
    }

    enum StoreOutcome: Sendable {
        case stored(victims: [(id: EntryID, fingerprint: EntryFingerprint)])
        case failed(errno: Int32)
    }

    /// Writes `entry` to a temporary file and renames it over the entry's
    /// file, recording it (and evicting for it) while no deleter of this
    /// process can look at that file.
    private func store(_ entry: [UInt8], id: EntryID, record: DiskIndexEntry) async -> StoreOutcome {
        let directory = path
        let written = entry.count <= Self.inlineIOLimit
            ? FileIO.writeTemporary(entry, in: directory)
            : await offload { FileIO.writeTemporary(entry, in: directory) }
        guard case .written(let temp) = written else {
            if case .failed(let code) = written { return .failed(errno: code) }
            return .failed(errno: EIO)
        }
        let file = file(id)
        return entryLocks.withLock(id) {
            changes.noteOwnRename(id, record.fingerprint)
            if rename(temp, file) != 0 {
                let code = errno
                unlink(temp)
                return .failed(errno: code)
            }
            return state.withLock { state in
                state.index.insert(id, record)
                return .stored(victims: Self.noteEvicted(state.index.evictOverCapacity(), in: &state))
            }
        }
    }

    public func remove(_ key: Key) async throws {
        defer { changes.listeners.reportLocalWrite(.key(key)) }
        let id = EntryID(keyBytes: keyBytes(key))
        let file = file(id)
        let directory = path
        let failure: Int32? = entryLocks.withLock(id) {
            changes.noteOwnDelete(id)
            // Not while another process's checked delete has moved a version
            // aside: it may put that version back (see ``FileIO/unlinkIfUnchanged(_:expected:directory:waiting:step:)``).
            if FileIO.withDeleteLock(directory, exclusive: false, { unlink(file) }) != 0 {
                let code = errno
                changes.ownDeleteFailed(id)
                if code != ENOENT { return code }
            }
            state.withLock { state in
                state.index.remove(id)
                state.dirtyAccess[id] = nil
            }
            return nil
        }
        if let failure { throw DiskCacheError.writeFailed(path: file, errno: failure) }
    }
}
