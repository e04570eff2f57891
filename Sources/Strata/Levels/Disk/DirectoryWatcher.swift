import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc

/// Watches one directory with inotify for files renamed into it or deleted
/// from it, which is how every disk level (of any process) replaces and
/// removes entries. Events are delivered in order, in batches, on the
/// process's inotify queue (``InotifyHub``).
///
/// `.lost` means changes may have been missed: the kernel's event queue
/// overflowed, or the directory itself was deleted or moved (call
/// ``rewatch()`` once it exists again).
///
/// Only the current watch's events are delivered: after ``rewatch()`` moved
/// the watch to a new directory at the same path, what is still queued from
/// the old one (its files, its `IN_IGNORED`) is dropped. Those changes were
/// made in a directory that is no longer at the path, before the re-watch,
/// and whoever re-watches reports that anything may have changed.
final class DirectoryWatcher: Sendable {
    enum Event: Sendable, Equatable {
        case renamedInto(String)
        case deleted(String)
        case lost
    }

    private let path: String
    private let hub: InotifyHub
    private let token: Int
    private let stopped = Atomic<Bool>(false)

    /// Starts watching `path` (through the process's one inotify instance,
    /// ``InotifyHub``); throws the errno if it cannot (no directory there,
    /// or the per-user watch limit is reached).
    init(path: String, handler: @escaping @Sendable ([Event]) -> Void) throws(DirectoryWatcherError) {
        let hub = try InotifyHub.shared()
        self.path = path
        self.hub = hub
        token = try hub.subscribe(path) { events in handler(events.map(\.event)) }.get()
    }

    /// Watches whatever directory is at the path now (after it was deleted,
    /// moved, or to be sure after an overflow); returns the errno if it
    /// cannot (`ENOENT`: there is no directory). A different directory gets
    /// a new watch, and the old one (still alive if it was moved) is removed
    /// once no other watcher in this process uses it.
    func rewatch() -> Int32? {
        hub.move(token, to: path)
    }

    func stop() {
        if !stopped.exchange(true, ordering: .acquiringAndReleasing) { hub.unsubscribe(token) }
    }

    deinit { stop() }

    /// Parses a buffer of `struct inotify_event` records (header, then a
    /// NUL-padded name of `len` bytes), each with its watch descriptor
    /// (-1 for a queue overflow, which concerns every watch).
    static func parse(_ bytes: UnsafeRawBufferPointer) -> [(watch: Int32, event: Event)] {
        var events: [(watch: Int32, event: Event)] = []
        var offset = 0
        let headerSize = MemoryLayout<inotify_event>.size
        while offset + headerSize <= bytes.count {
            let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + headerSize
            guard nameStart + length <= bytes.count else { break }
            let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<(nameStart + length)])
            let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
            if mask & UInt32(IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 {
                events.append((wd, .lost))
            } else if mask & UInt32(IN_MOVED_TO) != 0 {
                events.append((wd, .renamedInto(name)))
            } else if mask & UInt32(IN_DELETE) != 0 {
                events.append((wd, .deleted(name)))
            }
            offset = nameStart + length
        }
        return events
    }
}

/// inotify could not be set up (errno).
struct DirectoryWatcherError: Error {
    let errno: Int32
}
#endif
