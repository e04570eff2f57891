import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc

/// One inotify instance for the whole process, shared by every
/// ``DirectoryWatcher``.
///
/// Why one: the kernel allows each user only `fs.inotify.max_user_instances`
/// instances (128 by default), counted across all of that user's processes.
/// With an instance per disk level, a few processes with a few disk levels
/// each (or one process with many) ran out, and a level that cannot watch
/// its directory never hears of other writers, so the levels above it kept
/// values that other processes had replaced or removed. Watches are far
/// more plentiful (`max_user_watches`, tens of thousands or more).
///
/// Design: one non-blocking descriptor read by one Dispatch source on one
/// serial queue. Each subscriber has a token and the watch descriptor of
/// the directory it watches now. inotify gives one instance a single watch
/// per directory, so subscribers on the same directory share a descriptor:
/// the hub counts them and removes a watch only when its last subscriber
/// leaves or moves on. Events are read outside the lock, then matched to
/// subscribers under it (``move(_:to:)`` holds it across
/// `inotify_add_watch`, so an event of a new watch is never taken for a
/// stale one), and each subscriber's events are handed, in order, in one
/// batch per read, to that subscriber's own serial queue. A queue overflow
/// (watch descriptor -1) concerns everyone.
final class InotifyHub: Sendable {
    typealias Handler = @Sendable ([(watch: Int32, event: DirectoryWatcher.Event)]) -> Void

    private struct Subscriber {
        var watch: Int32
        let handler: Handler
        /// Its batches run here, in order: the hub's queue only reads and
        /// sorts events, so one level's slow handling (it reads files) never
        /// holds up the others' or lets the kernel's queue overflow.
        let queue: DispatchQueue
    }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        /// Subscribers per watch descriptor.
        var users: [Int32: Int] = [:]
        var nextToken = 0
    }

    private static let instance = Mutex<InotifyHub?>(nil)

    /// The process's hub, created on first use; the errno if inotify cannot
    /// be set up (tried again on the next call).
    static func shared() throws(DirectoryWatcherError) -> InotifyHub {
        let result = instance.withLock { instance -> Result<InotifyHub, DirectoryWatcherError> in
            if let instance { return .success(instance) }
            let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard fd >= 0 else { return .failure(DirectoryWatcherError(errno: errno)) }
            let hub = InotifyHub(descriptor: fd)
            instance = hub
            return .success(hub)
        }
        return try result.get()
    }

    private let descriptor: Int32
    private let state = Mutex(State())
    /// Kept for the life of the process (the hub is never released); the
    /// lock only makes the reference Sendable, nothing touches it later.
    private let source: Mutex<any DispatchSourceRead>

    private init(descriptor: Int32) {
        self.descriptor = descriptor
        source = Mutex(DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: DispatchQueue(label: "strata.disk.watch")))
        source.withLock { source in
            source.setEventHandler { [unowned self] in deliver(Self.drain(descriptor)) }
            source.resume()
        }
    }

    /// Watches `path` for `handler`; returns the subscriber's token, and
    /// the errno if the directory cannot be watched yet (the subscriber then
    /// watches nothing until ``move(_:to:)`` succeeds).
    func subscribe(_ path: String, handler: @escaping Handler) -> (token: Int, failure: Int32?) {
        state.withLock { state in
            let wd = addWatch(path)
            let failure = wd >= 0 ? nil : errno
            let token = state.nextToken
            state.nextToken += 1
            state.subscribers[token] = Subscriber(watch: wd, handler: handler, queue: DispatchQueue(label: "strata.disk.watch.\(token)"))
            if wd >= 0 { state.users[wd, default: 0] += 1 }
            return (token, failure)
        }
    }

    /// Moves `token`'s watch to whatever directory is at `path` now; the
    /// errno if it cannot (`ENOENT`: there is no directory).
    func move(_ token: Int, to path: String) -> Int32? {
        state.withLock { state -> Int32? in
            guard let old = state.subscribers[token]?.watch else { return nil }
            let wd = addWatch(path)
            guard wd >= 0 else { return errno }
            if wd != old {
                state.subscribers[token]?.watch = wd
                state.users[wd, default: 0] += 1
                if old >= 0 { release(old, &state) }
            }
            return nil
        }
    }

    /// Ends `token`'s subscription; its handler is not called for events
    /// read after this returns (batches already handed out may still run).
    func unsubscribe(_ token: Int) {
        state.withLock { state in
            guard let subscriber = state.subscribers.removeValue(forKey: token), subscriber.watch >= 0 else { return }
            release(subscriber.watch, &state)
        }
    }

    private func release(_ wd: Int32, _ state: inout State) {
        let left = (state.users[wd] ?? 1) - 1
        if left > 0 {
            state.users[wd] = left
        } else {
            state.users[wd] = nil
            inotify_rm_watch(descriptor, wd)  // EINVAL if the kernel already removed it
        }
    }

    private func addWatch(_ path: String) -> Int32 {
        if let injected = Self.failingPaths.withLock({ $0[path] }) {
            errno = injected
            return -1
        }
        return inotify_add_watch(descriptor, path, UInt32(IN_MOVED_TO | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR))
    }

    /// For tests: watching one of these paths fails with its errno (as when
    /// the per-user watch limit is reached), without touching the machine's
    /// limits or other tests' directories.
    static let failingPaths = Mutex<[String: Int32]>([:])

    private func deliver(_ events: [(watch: Int32, event: DirectoryWatcher.Event)]) {
        guard !events.isEmpty else { return }
        let everyone = events.contains { $0.watch == -1 }
        var byWatch: [Int32: [(watch: Int32, event: DirectoryWatcher.Event)]] = [:]
        if !everyone { for event in events { byWatch[event.watch, default: []].append(event) } }
        let batches = state.withLock { state -> [(Subscriber, [(watch: Int32, event: DirectoryWatcher.Event)])] in
            state.subscribers.compactMap { _, subscriber in
                // An overflow (rare) is everyone's, in its place among the rest.
                let mine = everyone ? events.filter { $0.watch == subscriber.watch || $0.watch == -1 }
                                    : byWatch[subscriber.watch] ?? []
                return mine.isEmpty ? nil : (subscriber, mine)
            }
        }
        for (subscriber, batch) in batches { subscriber.queue.async { subscriber.handler(batch) } }
    }

    /// Reads every pending event (the descriptor is non-blocking).
    private static func drain(_ fd: Int32) -> [(watch: Int32, event: DirectoryWatcher.Event)] {
        var events: [(watch: Int32, event: DirectoryWatcher.Event)] = []
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(fd, buffer, capacity)
            if count <= 0 { break }
            events += DirectoryWatcher.parse(UnsafeRawBufferPointer(start: buffer, count: count))
        }
        return events
    }
}
#endif
