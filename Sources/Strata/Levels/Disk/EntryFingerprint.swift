import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One version of an entry file: what the disk level compares before it
/// deletes a file, so it never deletes a newer version a concurrent writer
/// (in this process or another) renamed into place after the decision.
///
/// A valid entry is identified by its header's creation time (unique per
/// write, see ``EntryFingerprint/nextCreationTime()``), its checksum and its
/// size; any other file by its first bytes and its size.
enum EntryFingerprint: Equatable, Sendable {
    case entry(createdAt: Int64, checksum: UInt64, size: Int)
    case other(prefix: Data, size: Int)

    /// The fingerprint of a file of `size` bytes starting with `prefix`
    /// (at least the header's bytes when the file has them).
    init(prefix: UnsafeRawBufferPointer, size: Int) {
        if let header = DiskEntryHeader.parse(prefix), header.fileSize == size {
            self = .entry(createdAt: header.createdAt, checksum: header.checksum, size: size)
        } else {
            self = .other(prefix: Data(prefix.prefix(DiskEntryHeader.size)), size: size)
        }
    }

    init(prefix: Data, size: Int) {
        self = prefix.withUnsafeBytes { EntryFingerprint(prefix: $0, size: size) }
    }

    /// The fingerprint of the file at `path` now; `nil` if it is gone or unreadable.
    static func ofFile(_ path: String) -> EntryFingerprint? {
        guard case .bytes(let prefix, let size) = FileIO.readPrefix(path, count: DiskEntryHeader.size) else { return nil }
        return EntryFingerprint(prefix: prefix, size: size)
    }

    /// Whether this version was written after `other` (by creation time;
    /// a file that is not a valid entry counts as newer, to be looked at).
    func isNewer(than other: EntryFingerprint) -> Bool {
        if case .entry(let mine, _, _) = self, case .entry(let theirs, _, _) = other { return mine > theirs }
        return true
    }

    private static let lastCreationTime = Atomic<Int64>(0)

    /// The wall clock in ns since 1970, strictly increasing within this
    /// process: two writes of the same bytes still get different fingerprints.
    static func nextCreationTime() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let now = Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec)
        var last = lastCreationTime.load(ordering: .relaxed)
        while true {
            let next = max(now, last &+ 1)
            let (exchanged, original) = lastCreationTime.compareExchange(
                expected: last, desired: next, ordering: .relaxed)
            if exchanged { return next }
            last = original
        }
    }
}
