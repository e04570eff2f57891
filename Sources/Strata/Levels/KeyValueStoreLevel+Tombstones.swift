import Foundation

// Design note: removes in a domain shared by processes.
//
// A back-fill (a stack's copy of what it read below, or a load's landing)
// never replaces a live value: one stored since its read missed is newer.
// A remove leaves nothing, though, so a back-fill whose read began before
// another process's remove (the cache-aside race: the origin changed and
// the key was removed while a load of the old value was in flight) would
// land the removed value for every process on the domain. As on the disk
// level (`DiskTombstones`), a remove leaves a tombstone in the domain,
// `!removed:<storage key>` (a storage key is base64: never a `!`), holding
// when it happened (wall-clock nanoseconds, 8 bytes), and a clear leaves
// `!cleared`. A back-fill whose read began before a young one of its key or
// of the clear, or that does not say when, is declined; it is checked under
// the domain's write lock, where the landing is written. Tombstones stop
// back-fills as long as the disk level's do (its lifetime) and are dropped by
// the removes, clears and `removeExpired()` that find them older; they are
// neither counted nor listed.

extension KeyValueStoreLevel {
    /// A back-fill's landing: when its read began, on the wall clock (`nil`: unknown).
    struct Landing {
        var readStart: Int64?
    }

    /// The tombstones kept among a domain's entries (see the note above).
    enum Tombstones {
        static var clearedKey: String { "!cleared" }

        /// The tombstone of the entry stored as `storageKey`.
        static func key(_ storageKey: String) -> String { "!removed:" + storageKey }

        static func isTombstone(_ key: String) -> Bool { key.hasPrefix("!") }

        /// When the tombstone `entry` was made (`nil`: none).
        static func time(_ entry: Entry?) -> Int64? {
            guard let bytes = entry?.value, bytes.count == 8 else { return nil }
            return Int64(littleEndian: bytes.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) })
        }

        /// Records a remove of `storageKey` (`nil`: a clear) now, dropping the tombstones too old to stop anything.
        static func record(_ storageKey: String?, in entries: inout [String: Entry]) {
            sweep(&entries)
            let now = withUnsafeBytes(of: DiskTombstones.wallNow().littleEndian) { Data($0) }
            entries[storageKey.map(Self.key) ?? clearedKey] = Entry(value: now, expiresAt: nil)
        }

        /// Whether a back-fill of `storageKey` whose read began at `readStart`
        /// (wall clock; `nil`: unknown) must be declined: a young tombstone of
        /// its key or of a clear is not older than it.
        static func forbid(_ storageKey: String, readStart: Int64?, in entries: [String: Entry]) -> Bool {
            let now = DiskTombstones.wallNow()
            guard let removed = [time(entries[key(storageKey)]), time(entries[clearedKey])].compactMap({ $0 })
                .filter({ DiskTombstones.isLive($0, now: now) }).max() else { return false }
            guard let readStart else { return true }
            return removed >= readStart
        }

        /// Drops the tombstones too old to stop anything.
        static func sweep(_ entries: inout [String: Entry]) {
            let now = DiskTombstones.wallNow()
            for (key, entry) in entries where isTombstone(key) {
                if let made = time(entry), DiskTombstones.isLive(made, now: now) { continue }
                entries[key] = nil
            }
        }
    }
}
