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
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: DispatchQueue(label: "strata.disk.watch"))
        source.setEventHandler { handler(Self.drain(fd)) }
        source.setCancelHandler { close(fd) }
        source.resume()
        self.source = Mutex(source)
    }

    /// Watches the directory again after it was recreated; `false` if it cannot.
    @discardableResult
    func rewatch() -> Bool { addWatch() }

    private func addWatch() -> Bool {
        let wd = Self.addWatch(descriptor, path)
        guard wd >= 0 else { return false }
        watch.withLock { $0 = wd }
        return true
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
    private static func drain(_ fd: Int32) -> [Event] {
        var events: [Event] = []
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
    /// NUL-padded name of `len` bytes).
    static func parse(_ bytes: UnsafeRawBufferPointer) -> [Event] {
        var events: [Event] = []
        var offset = 0
        let headerSize = MemoryLayout<inotify_event>.size
        while offset + headerSize <= bytes.count {
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + headerSize
            guard nameStart + length <= bytes.count else { break }
            let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<(nameStart + length)])
            let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
            if mask & UInt32(IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 {
                events.append(.lost)
            } else if mask & UInt32(IN_MOVED_TO) != 0 {
                events.append(.renamedInto(name))
            } else if mask & UInt32(IN_DELETE) != 0 {
                events.append(.deleted(name))
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
