import Foundation

extension DiskCacheLevel: InspectableLevel {
    /// Lists from the index and each file's header; peeks by reading the file.
    package var inspector: LevelInspector<Key, Value>? {
        LevelInspector(keys: { [self] limit in await offload { self.inspectKeys(limit: limit) } },
                       peek: { [self] key in try await peek(key) })
    }

    /// Key bytes read for a listed entry at most (longer keys are shown cut).
    static var inspectedKeyLimit: Int { 4096 }

    /// Up to `limit` unexpired entries the index knows, each with its key (read
    /// from its file's header: one bounded read per entry), file size, age
    /// since written, TTL left and, under ``EvictionPolicy/adaptive``, the
    /// sketch's frequency estimate. Touches no access time; files that vanished
    /// or are not valid entries are left out. Empty after ``shutdown()``.
    package func inspectKeys(limit: Int) -> [KeyInspection] {
        guard limit > 0, gate.enter() else { return [] }
        defer { gate.leave() }
        let (listed, voided) = state.withLock { ($0.index.listing(limit: limit), $0.voided) }
        let now = clock.now().nanosecondsSince1970
        // Creation times are the system's wall clock (``EntryFingerprint/nextCreationTime()``), not `clock`'s.
        let wallClock = SystemClock().now().nanosecondsSince1970
        let codecPrefix = Array(codec.name.utf8) + [0]
        return listed.compactMap { id, entry, frequency in
            guard entry.expiresAt == 0 || now < entry.expiresAt,
                  case .bytes(let prefix, let size) = FileIO.readPrefix(file(id), count: DiskEntryHeader.size + Self.inspectedKeyLimit),
                  let header = prefix.withUnsafeBytes({ DiskEntryHeader.parse($0) }), header.fileSize == size,
                  !predatesCoherence(createdAt: header.createdAt, voided: voided[id]) else { return nil }
            let stored = prefix.dropFirst(DiskEntryHeader.size).prefix(header.keyLength)
            let key = stored.starts(with: codecPrefix) ? stored.dropFirst(codecPrefix.count) : stored
            return KeyInspection(key: KeyInspection.text(key), size: size,
                                 age: .nanoseconds(max(0, wallClock - header.createdAt)),
                                 ttlLeft: KeyInspection.ttlLeft(expiresAt: header.expiresAt, now: now),
                                 frequency: frequency)
        }
    }

    /// The value stored for `key` with its expiry and file size, `nil` if none,
    /// expired, corrupt or undecodable; not a use (no access time, no policy
    /// hit, nothing deleted or counted). Throws when the file cannot be read.
    package func peek(_ key: Key) async throws -> PeekedEntry<Value>? {
        guard gate.enter() else { return nil }
        defer { gate.leave() }
        let bytes = keyBytes(key)
        let id = EntryID(keyBytes: bytes)
        let file = file(id)
        let result = await offload { FileIO.readFile(file) }
        let data: Data
        switch result {
        case .notFound: return nil
        case .failed(let code): throw DiskCacheError.readFailed(path: file, errno: code)
        case .bytes(let read): data = read
        }
        guard let header = data.withUnsafeBytes({ DiskEntryHeader.parse($0) }), header.fileSize == data.count,
              !predatesCoherence(id, createdAt: header.createdAt) else { return nil }
        let valueStart = DiskEntryHeader.size + header.keyLength
        let valid = data.withUnsafeBytes { raw in
            let storedKey = UnsafeRawBufferPointer(rebasing: raw[DiskEntryHeader.size..<valueStart])
            return storedKey.elementsEqual(bytes) && DiskEntryHeader.checksum(
                key: storedKey, value: UnsafeRawBufferPointer(rebasing: raw[valueStart...])) == header.checksum
        }
        let now = clock.now().nanosecondsSince1970
        guard valid, header.expiresAt == 0 || now < header.expiresAt,
              let value = try? codec.decode(data.subdata(in: valueStart..<data.count)) else { return nil }
        return PeekedEntry(value: value, expiresAt: header.expiresAt == 0 ? nil : CacheInstant(nanosecondsSince1970: header.expiresAt),
                           size: data.count)
    }
}
