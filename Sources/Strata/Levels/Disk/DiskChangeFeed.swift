import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Tells the levels above a disk level which entries other writers (other
/// disk levels on the directory, in any process) replaced or deleted, keeping
/// each process's memory level coherent with the shared directory.
///
/// Design: an inotify watch (``DirectoryWatcher``) reports entry files renamed
/// in or deleted. Names are hashes, so the feed maps back keys read (hit or
/// miss, noted before the read) or written since someone listened, the only
/// keys a level above can hold; past ``keyLimit`` it reports `.all` and starts
/// over. Own renames (by fingerprint) and deletes (counted) are not reported;
/// anything ambiguous is (an extra invalidation costs a re-read, a missing one
/// a stale answer). One task publishes in order. A lost watch is re-established
/// once a directory is at the path (when the loss is handled, else by
/// ``ensureWatching()``), reporting `.all` queued after the new watch exists:
/// earlier changes are covered by it, later ones seen by the new watch.
final class DiskChangeFeed<Key: Sendable>: Sendable {
    static var keyLimit: Int { 1 << 20 }

    private struct State {
        var watcher: DirectoryWatcher?
        var keys: [EntryID: Key] = [:]
        /// Own renames whose events have not arrived, oldest first (one per rename).
        var ownRenames: [EntryID: [EntryFingerprint]] = [:]
        /// Deletes by this level whose events have not arrived yet.
        var ownDeletes: [EntryID: Int] = [:]
        /// Why the last attempt to watch the path again failed (logged once).
        var rewatchFailure: Int32?
        var continuation: AsyncStream<CacheInvalidation<Key>>.Continuation?
        /// ``stop()`` was called: nothing is watched or reported any more.
        var stopped = false
    }

    let listeners = InvalidationListeners<Key>()
    private let isOn = Atomic<Bool>(false)
    private let state = Mutex(State())
    private let reported = Atomic<Int>(0)
    /// An `.all` is queued and its publisher has not taken it yet.
    private let allQueued = AllQueued()

    final class AllQueued: Sendable {
        private let flag = Atomic<Bool>(false)
        /// Marks one queued; `false` if one already was.
        func claim() -> Bool { !flag.exchange(true, ordering: .sequentiallyConsistent) }
        /// The publisher took it (before publishing it).
        func taken() { flag.store(false, ordering: .sequentiallyConsistent) }
    }
    /// The watch ended and nothing at the path is watched yet. Set only under
    /// `state`'s lock, before that attempt's `.all`; read without it per hit.
    private let watchLost = Atomic<Bool>(false)
    private let logger = Logger(label: "strata.disk")

    /// Levels above listen and the directory is not watched (``DiskCacheLevel/isUnwatched``).
    var isWatchLost: Bool { watchLost.load(ordering: .relaxed) }

    /// Invalidations reported to the levels above so far.
    var invalidationsReported: Int { reported.load(ordering: .relaxed) }

    private let ownWrites = Atomic<Int>(0)

    /// This level's own writes reported to the listeners so far (see ``reportOwnWrite(_:origin:)``).
    var ownWritesReported: Int { ownWrites.load(ordering: .relaxed) }

    /// Reports an own write (the watch does not) to this process's listeners
    /// (``InvalidationListeners/reportLocalWrite(_:origin:)``).
    func reportOwnWrite(_ invalidation: CacheInvalidation<Key>, origin: CacheWriteOrigin = CacheContext.writeOrigin) {
        ownWrites.add(1, ordering: .relaxed)
        listeners.reportLocalWrite(invalidation, origin: origin)
    }

    /// Adds `listener` (until its subscription goes); the first one starts
    /// watching `path`. Returns the inotify errno if it could not (the listener
    /// is kept): a lost watch, so until a rewatch works every hit reports `.all`
    /// (levels above keep nothing replaced unheard). Slower, never stale; logged.
    func add(_ listener: @escaping InvalidationListeners<Key>.Listener, path: String,
             fingerprint: @escaping @Sendable (String) -> EntryFingerprint?) -> (CacheSubscription, Int32?) {
        let subscription = listeners.add(listener)
        #if canImport(Glibc)
        return (subscription, state.withLock { state -> Int32? in
            guard state.watcher == nil, !state.stopped else { return nil }
            let (stream, continuation) = AsyncStream<CacheInvalidation<Key>>.makeStream()
            let watcher = DirectoryWatcher(path: path) { [weak self] events in
                self?.handle(events, path: path, fingerprint: fingerprint)
            }
            state.watcher = watcher
            state.continuation = continuation
            isOn.store(true, ordering: .releasing)
            let listeners = self.listeners
            let allQueued = self.allQueued
            // Detached: it outlives this call and must carry none of its
            // task-locals (a request's trace would get every later event).
            Task.detached {
                for await invalidation in stream {
                    if case .all = invalidation { allQueued.taken() }
                    await listeners.publish(invalidation)
                }
            }
            guard let failure = watcher.initialFailure else { return nil }
            state.rewatchFailure = failure  // logged by the caller; not again by each retry
            watchLost.store(true, ordering: .sequentiallyConsistent)
            report(.all, &state)
            return failure
        })
        #else
        return (subscription, nil)
        #endif
    }

    /// Remembers which key a file holds (only while someone listens). Call it
    /// *before* touching the file: events for unknown files are dropped, so a
    /// change between the access and a later `note` would be lost.
    @inline(__always)
    func note(_ id: EntryID, _ key: Key) {
        guard isOn.load(ordering: .relaxed) else { return }
        state.withLock { state in
            state.keys[id] = key
            if state.keys.count > Self.keyLimit {
                state.keys.removeAll()
                report(.all, &state)
            }
        }
    }

    /// This level is about to rename `fingerprint` into `id`'s file.
    @inline(__always)
    func noteOwnRename(_ id: EntryID, _ fingerprint: EntryFingerprint) {
        guard isOn.load(ordering: .relaxed) else { return }
        state.withLock { $0.ownRenames[id, default: []].append(fingerprint) }
    }

    /// The rename noted by ``noteOwnRename(_:_:)`` failed: no event comes for it.
    func ownRenameFailed(_ id: EntryID, _ fingerprint: EntryFingerprint) {
        guard isOn.load(ordering: .relaxed) else { return }
        state.withLock { state in
            guard var pending = state.ownRenames[id], let i = pending.lastIndex(of: fingerprint) else { return }
            pending.remove(at: i)
            state.ownRenames[id] = pending.isEmpty ? nil : pending
        }
    }

    /// This level is about to unlink `id`'s file (`remove`, `clear`): its
    /// event is not reported. Call ``ownDeleteFailed(_:)`` if the unlink fails.
    @inline(__always)
    func noteOwnDelete(_ id: EntryID) {
        guard isOn.load(ordering: .relaxed) else { return }
        state.withLock { $0.ownDeletes[id, default: 0] += 1 }
    }

    func ownDeleteFailed(_ id: EntryID) {
        guard isOn.load(ordering: .relaxed) else { return }
        state.withLock { state in
            if let count = state.ownDeletes[id] { state.ownDeletes[id] = count > 1 ? count - 1 : nil }
        }
    }

    /// The directory was recreated: watch it again and report `.all`.
    func directoryRecreated() {
        guard isOn.load(ordering: .relaxed) else { return }
        state.withLock { rewatch(&$0) }
    }

    /// Call after reading an entry file or renaming one in (whenever a value may
    /// go above, before it settles there unwatched): if the watch was lost,
    /// rewatches and reports `.all`. After the access, a watch not lost was live
    /// then or its loss's report is yet to come. A composition drops back-fills
    /// begun before such a report, and lands none before this write ends.
    @inline(__always)
    func ensureWatching() {
        guard watchLost.load(ordering: .sequentiallyConsistent) else { return }
        state.withLock { state in
            guard watchLost.load(ordering: .sequentiallyConsistent) else { return }
            rewatch(&state)
        }
    }

    /// Watches whatever directory is at the path now, then reports `.all` (both
    /// under the lock); with none yet, the next ``ensureWatching()`` retries.
    private func rewatch(_ state: inout State) {
        #if canImport(Glibc)
        if let watcher = state.watcher {
            let failure = watcher.rewatch()
            watchLost.store(failure != nil, ordering: .sequentiallyConsistent)
            if failure == nil {
                // Own deletes whose events left with the old watch would swallow
                // another writer's later delete: forget them (the report below
                // covers them; a late own event costs a spare invalidation).
                state.ownDeletes = [:]
                state.ownRenames = [:]
            } else if let failure, failure != ENOENT, failure != ENOTDIR, failure != state.rewatchFailure {
                logger.warning("cannot watch the cache directory again; levels above are cleared until it can be",
                               metadata: ["error": "\(DiskCacheError.text(failure))"])
            }
            state.rewatchFailure = failure
        }
        #endif
        report(.all, &state)
    }

    /// Stops for good (level shut down): cancels the watch, ends the stream,
    /// stops noting keys; a later ``add`` keeps its listener but watches nothing.
    /// Events handled meanwhile find no watcher to move and report nowhere.
    func stop() {
        state.withLock { state in
            state.stopped = true
            isOn.store(false, ordering: .releasing)
            watchLost.store(false, ordering: .sequentiallyConsistent)
            #if canImport(Glibc)
            state.watcher?.stop()
            state.watcher = nil
            #endif
            state.continuation?.finish()
            state.continuation = nil
            state.keys = [:]
            state.ownRenames = [:]
            state.ownDeletes = [:]
        }
    }

    private func handle(_ events: [DirectoryWatcher.Event], path: String,
                        fingerprint: @Sendable (String) -> EntryFingerprint?) {
        for event in events {
            switch event {
            case .lost:
                // An overflow, or the directory gone or moved: watch what is there now.
                state.withLock { rewatch(&$0) }
            case .deleted(let name):
                guard let id = EntryID(fileName: name) else { continue }
                state.withLock { state in
                    if let count = state.ownDeletes[id] {
                        state.ownDeletes[id] = count > 1 ? count - 1 : nil
                        return
                    }
                    if let key = state.keys[id] { report(.key(key), &state) }
                }
            case .renamedInto(let name):
                guard let id = EntryID(fileName: name) else { continue }
                // No own rename pending: another writer's (ours are noted first).
                if state.withLock({ $0.ownRenames[id] != nil }) {
                    // Read the file *before* the pending list: any version of ours
                    // in it was noted before its rename, so is in the list.
                    let current = fingerprint(path + "/" + name)
                    // This event is the oldest own rename's unless another writer's
                    // came first; the rest are later versions of ours, maybe in the file.
                    let own = state.withLock { state -> [EntryFingerprint] in
                        guard var pending = state.ownRenames[id], !pending.isEmpty else { return [] }
                        let all = pending
                        pending.removeFirst()
                        state.ownRenames[id] = pending.isEmpty ? nil : pending
                        return all
                    }
                    // Ours unless the file holds a version that is not. A file
                    // already gone (evicted here: moved aside, no event) changed
                    // nothing of another writer's, whose delete has its own event.
                    if !own.isEmpty, current.map(own.contains) ?? true { continue }
                }
                state.withLock { state in
                    if let key = state.keys[id] { report(.key(key), &state) }
                }
            }
        }
    }

    private func report(_ invalidation: CacheInvalidation<Key>, _ state: inout State) {
        // A queued `.all` covers this one (it goes out later): while unwatchable
        // every hit reports one, and a hot loop must not queue them unbounded.
        guard let continuation = state.continuation else { return }
        if case .all = invalidation, !allQueued.claim() { return }
        reported.add(1, ordering: .relaxed)
        continuation.yield(invalidation)
    }

    deinit {
        state.withLock { state in
            #if canImport(Glibc)
            state.watcher?.stop()
            #endif
            state.continuation?.finish()
        }
    }
}
