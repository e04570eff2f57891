import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc

/// Watches one directory with inotify for files renamed into it or deleted
/// from it, which is how every disk level (of any process) replaces and
/// removes entries. Events are delivered in order, in batches, on this
/// watcher's own serial queue (read by the process's ``InotifyHub``).
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
    private let handler: @Sendable ([Event]) -> Void
    /// The process's hub and this watcher's token there; `nil` while the
    /// hub cannot be set up (no inotify instance left for this user).
    private let subscription = Mutex<(hub: InotifyHub, token: Int)?>(nil)
    private let stopped = Atomic<Bool>(false)
    /// Why the directory could not be watched at start (`nil`: it is).
    /// Until ``rewatch()`` succeeds nothing is reported.
    let initialFailure: Int32?

    /// Starts watching `path` through the process's one inotify instance
    /// (``InotifyHub``). If it cannot (no directory there, the per-user
    /// watch or instance limit reached), ``initialFailure`` says why and
    /// ``rewatch()`` tries again.
    init(path: String, handler: @escaping @Sendable ([Event]) -> Void) {
        self.path = path
        self.handler = handler
        var failure: Int32?
        subscription.withLock { subscription in failure = Self.subscribe(path, handler, &subscription) }
        initialFailure = failure
    }

    private static func subscribe(_ path: String, _ handler: @escaping @Sendable ([Event]) -> Void,
                                  _ subscription: inout (hub: InotifyHub, token: Int)?) -> Int32? {
        do throws(DirectoryWatcherError) {
            let hub = try InotifyHub.shared()
            let (token, failure) = hub.subscribe(path) { events in handler(events.map(\.event)) }
            subscription = (hub, token)
            return failure
        } catch {
            return error.errno
        }
    }

    /// Watches whatever directory is at the path now (after it was deleted,
    /// moved, to be sure after an overflow, or when watching failed); returns
    /// the errno if it cannot (`ENOENT`: there is no directory). A different
    /// directory gets a new watch, and the old one (still alive if it was
    /// moved) is removed once no other watcher in this process uses it.
    func rewatch() -> Int32? {
        subscription.withLock { subscription -> Int32? in
            guard !stopped.load(ordering: .acquiring) else { return nil }
            guard let (hub, token) = subscription else { return Self.subscribe(path, handler, &subscription) }
            return hub.move(token, to: path)
        }
    }

    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        subscription.withLock { subscription in
            if let (hub, token) = subscription { hub.unsubscribe(token) }
            subscription = nil
        }
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
