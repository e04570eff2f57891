import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc

/// Watches one directory with inotify for files renamed into it or deleted
/// from it, which is how every disk level (of any process) replaces and
/// removes entries. Events are delivered in order, in batches, on a private
/// serial queue.
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
    private let descriptor: Int32
    private let watch: Mutex<Int32>
    private let source: Mutex<(any DispatchSourceRead)?>

    /// Starts watching `path`; `nil` (with the errno) if inotify is unavailable
    /// (for example the per-user watch limit is reached).
    init(path: String, handler: @escaping @Sendable ([Event]) -> Void) throws(DirectoryWatcherError) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw DirectoryWatcherError(errno: errno) }
        let wd = Self.addWatch(fd, path)
        guard wd >= 0 else {
            let code = errno
            close(fd)
            throw DirectoryWatcherError(errno: code)
        }
        self.path = path
        self.descriptor = fd
        self.watch = Mutex(wd)
        self.source = Mutex(DispatchSource.makeReadSource(fileDescriptor: fd, queue: DispatchQueue(label: "strata.disk.watch")))
        source.withLock { source in
            source?.setEventHandler { [weak self] in
                guard let self else { return }
                let events = Self.drain(fd)
                // Under the lock `rewatch()` holds across `inotify_add_watch`,
                // so an event of a new watch is never taken for a stale one.
                let current = watch.withLock { current in
                    events.compactMap { $0.watch == current || $0.watch == -1 ? $0.event : nil }
                }
                if !current.isEmpty { handler(current) }
            }
            source?.setCancelHandler { close(fd) }
            source?.resume()
        }
    }

    /// Watches whatever directory is at the path now (after it was deleted,
    /// moved, or to be sure after an overflow); returns the errno if it
    /// cannot (`ENOENT`: there is no directory). A different directory gets
    /// a new watch, and the old one (still alive if it was moved) is removed.
    func rewatch() -> Int32? {
        watch.withLock { current -> Int32? in
            let wd = Self.addWatch(descriptor, path)
            guard wd >= 0 else { return errno }
            if wd != current {
                inotify_rm_watch(descriptor, current)  // EINVAL if the kernel already removed it
                current = wd
            }
            return nil
        }
    }

    private static func addWatch(_ fd: Int32, _ path: String) -> Int32 {
        inotify_add_watch(fd, path, UInt32(IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR))
    }

    func stop() {
        source.withLock { source in
            source?.cancel()
            source = nil
        }
    }

    deinit { stop() }

    /// Reads every pending event (the descriptor is non-blocking).
    private static func drain(_ fd: Int32) -> [(watch: Int32, event: Event)] {
        var events: [(watch: Int32, event: Event)] = []
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer, capacity)
            if count <= 0 { break }
            events += parse(UnsafeRawBufferPointer(start: buffer, count: count))
        }
        return events
    }

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
