import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What reading an entry file found.
enum EntryCheck {
    case valid(DiskEntryHeader)
    case corrupt
    case otherKey
}

extension DiskCacheLevel {
    public func getIfPresent(_ key: Key) async throws -> Value? {
        try await entry(forKey: key)?.value
    }

    /// The stored value with the expiry it was written with (so that a
    /// composition back-fills it with that expiry, never a fresh TTL).
    /// A miss once the level is shut down (``shutdown()``).
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        try Task.checkCancellation()
        guard gate.enter() else { return nil }
        defer { gate.leave() }
        let bytes = keyBytes(key)
        let id = EntryID(keyBytes: bytes)
        let file = file(id)
        let (expected, voided) = state.withLock { ($0.index.find(id)?.size, $0.voided[id]) }
        // Record the key *before* reading, as `set` does before renaming: the
        // feed drops events for files whose key it does not know, so a file
        // another writer replaces between this read and a later `note` would
        // go unreported while the value read here is back-filled above and
        // kept there. Recorded first, any replace after the read is reported
        // (one before it costs at most an extra invalidation). Re-checking the
        // file after reading would not do: the replace can still come between
        // the re-check and the `note`. Misses are recorded too; the map stays
        // bounded by ``DiskChangeFeed/keyLimit``.
        changes.note(id, key)
        let result: FileIO.ReadResult
        if (expected ?? 0) <= Self.inlineIOLimit {
            result = FileIO.readFile(file, expected: expected)
        } else {
            result = await offload { FileIO.readFile(file, expected: expected) }
        }
        switch result {
        case .notFound:
            if expected != nil { knownFileVanished(id) }
            return nil
        case .failed(let code):
            throw DiskCacheError.readFailed(path: file, errno: code)
        case .bytes(let data):
            // After the read: a watch lost meanwhile (the directory deleted and
            // created again by someone else) is re-established before this
            // value can be back-filled above, see ``DiskChangeFeed/ensureWatching()``.
            changes.ensureWatching()
            return try entryValue(data, key: key, keyBytes: bytes, id: id, file: file, voided: voided)
        }
    }

    private func entryValue(_ data: Data, key: Key, keyBytes bytes: [UInt8], id: EntryID, file: String,
                            voided: Int64?) throws -> CacheEntry<Value>? {
        let (check, fingerprint) = data.withUnsafeBytes { raw -> (EntryCheck, EntryFingerprint) in
            let fingerprint = EntryFingerprint(prefix: UnsafeRawBufferPointer(rebasing: raw.prefix(DiskEntryHeader.size)),
                                               size: raw.count)
            guard let header = DiskEntryHeader.parse(raw), header.fileSize == raw.count,
                  header.keyLength <= raw.count else { return (.corrupt, fingerprint) }
            let keyRange = DiskEntryHeader.size..<(DiskEntryHeader.size + header.keyLength)
            let storedKey = UnsafeRawBufferPointer(rebasing: raw[keyRange])
            let storedValue = UnsafeRawBufferPointer(rebasing: raw[keyRange.upperBound...])
            guard DiskEntryHeader.checksum(key: storedKey, value: storedValue) == header.checksum else {
                return (.corrupt, fingerprint)
            }
            return (storedKey.elementsEqual(bytes) ? .valid(header) : .otherKey, fingerprint)
        }
        switch check {
        case .corrupt:
            if deleteEntryFile(id, expecting: fingerprint, waiting: false) == .deleted {
                state.withLock { $0.counters.corruptRemoved += 1 }
                logger.notice("removed a corrupt cache entry", metadata: ["file": "\(file)"])
            }
            return nil
        case .otherKey:
            return nil  // a hash collision: that file belongs to another key
        case .valid(let header):
            // Written while nothing kept this level coherent with the level
            // below that reports changes, or before a write of its key that
            // could not reach it: it may be stale. A miss, left in place for
            // the back-fill that replaces it.
            if predatesCoherence(createdAt: header.createdAt, voided: voided) { return nil }
            let now = clock.now().nanosecondsSince1970
            if header.expiresAt != 0 && now >= header.expiresAt {
                deleteEntryFile(id, expecting: fingerprint, waiting: false)
                CacheContext.noteExpired()
                return nil
            }
            let valueStart = DiskEntryHeader.size + header.keyLength
            let value: Value
            do {
                value = try codec.decode(data.subdata(in: valueStart..<data.count))
            } catch {
                state.withLock { $0.counters.decodeFailures += 1 }
                logger.debug("undecodable entry left in place", metadata: ["file": "\(file)", "error": "\(error)"])
                return nil
            }
            let read = DiskIndexEntry(size: data.count, expiresAt: header.expiresAt, fingerprint: fingerprint)
            var flush = state.withLock { state -> Bool? in
                guard let known = state.index.find(id) else { return nil }
                state.index.touch(id)
                // Rewritten by another writer since it was indexed: know the newer version.
                if known.fingerprint != fingerprint && fingerprint.isNewer(than: known.fingerprint) {
                    state.index.update(id, read)
                }
                state.dirtyAccess[id] = now
                return state.dirtyAccess.count >= 256
            }
            if flush == nil {
                // Not indexed (another process wrote it): index it only if the
                // file still holds what was read (a remove may have come between).
                flush = entryLocks.withLock(id) {
                    guard EntryFingerprint.ofFile(file) == fingerprint else { return false }
                    return state.withLock { state in
                        if state.index.find(id) == nil { state.index.insert(id, read) } else { state.index.touch(id) }
                        state.dirtyAccess[id] = now
                        return state.dirtyAccess.count >= 256
                    }
                }
            }
            if flush == true { flushAccessTimesSoon() }
            let expiry = header.expiresAt == 0 ? nil : CacheInstant(nanosecondsSince1970: header.expiresAt)
            return CacheEntry(value: value, expiresAt: expiry)
        }
    }

    /// A file the index knew was not found: forget it (unless a writer put
    /// it back meanwhile), and recreate the directory if it was deleted.
    private func knownFileVanished(_ id: EntryID) {
        let file = file(id)
        entryLocks.withLock(id) {
            if access(file, F_OK) != 0 && errno == ENOENT {
                state.withLock { state in
                    state.index.remove(id)
                    state.dirtyAccess[id] = nil
                }
            }
        }
        if !FileIO.directoryExists(path) { recoverDirectory() }
    }
}
