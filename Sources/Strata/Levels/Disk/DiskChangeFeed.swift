import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Tells the levels above a disk level about entries that other writers
/// (other disk levels on the same directory, in this process or another)
/// replaced or deleted, so that each process's memory level stays coherent
/// with the shared directory.
///
/// Design: an inotify watch on the directory (``DirectoryWatcher``) reports
/// entry files renamed into place or deleted. A file name is a hash, so the
/// feed keeps the keys this level has been asked to read (hit or miss, noted
/// before the file is read) or written since someone started listening (the
/// only keys a level above can hold through a composition), bounded by ``keyLimit`` (past it, everything is reported as changed and the
/// map starts over). This level's own renames are recognised by the entry's
/// fingerprint, and its own `remove` and `clear` by a count of pending
/// deletes, and neither is reported; anything ambiguous is reported (an extra
/// invalidation costs a re-read, a missing one a stale answer). Events are
/// published in order by one task.
///
/// A lost watch (the directory deleted or moved away) is re-established as
/// soon as a directory is at the path again, whoever created it: at once
/// when the loss is handled if one already is, else by the next read that
/// finds a file or write that stores one (``ensureWatching()``) — before any
/// such value can settle in a level above unwatched. Each re-watch reports
/// that anything may have changed, queued after the new watch exists, so a
/// change made while nothing watched is covered by that report and any later
/// one is seen by the new watch.
final class DiskChangeFeed<Key: Sendable>: Sendable {
    static var keyLimit: Int { 1 << 20 }

    private struct State {
        var watcher: DirectoryWatcher?
        var keys: [EntryID: Key] = [:]
        /// Renames by this level whose events have not arrived yet, oldest
        /// first: a key written again before the watch reports the first
        /// rename has one event to come per rename.
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
    /// The watch ended and no directory at the path is watched yet. Set only
    /// under `state`'s lock, before the "anything may have changed" report of
    /// that attempt; read without it on every hit and write.
    private let watchLost = Atomic<Bool>(false)
    private let logger = Logger(label: "strata.disk")

    /// Levels above listen, and the directory is not watched now (see
    /// ``DiskCacheLevel/isUnwatched``).
    var isWatchLost: Bool { watchLost.load(ordering: .relaxed) }

    /// Invalidations reported to the levels above so far.
    var invalidationsReported: Int { reported.load(ordering: .relaxed) }

    private let ownWrites = Atomic<Int>(0)

    /// This level's own writes reported to the listeners so far (see ``reportOwnWrite(_:origin:)``).
    var ownWritesReported: Int { ownWrites.load(ordering: .relaxed) }

    /// Reports a write this level made itself, which the watch does not
    /// report, to the listeners in this process
    /// (``InvalidationListeners/reportLocalWrite(_:origin:)``).
    func reportOwnWrite(_ invalidation: CacheInvalidation<Key>, origin: CacheWriteOrigin = CacheContext.writeOrigin) {
        ownWrites.add(1, ordering: .relaxed)
        listeners.reportLocalWrite(invalidation, origin: origin)
    }

    /// Adds `listener` (until its subscription goes); the first one starts
    /// watching `path`. Also returns the inotify errno if watching could not
    /// start (the listener is kept).
    ///
    /// A directory that cannot be watched (the per-user watch or instance
    /// limit reached) is handled as a lost watch: every read that finds a
    /// file and every write that stores one tries to watch again and, while
    /// it cannot, reports that anything may have changed, so the levels
    /// above keep nothing from this level that another writer could have
    /// replaced unheard. Slower, never stale; a warning says why.
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
            // Detached: the loop outlives the registering call, and must
            // carry none of its task-locals (a request's trace would receive
            // every later report's events).
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
    /// *before* reading or writing the file: an event for a file whose key is
    /// not known is dropped, so a change that lands between the file access
    /// and a later `note` would be lost.
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

    /// The directory was recreated: watch it again, and report that anything
    /// may have changed.
    func directoryRecreated() {
        guard isOn.load(ordering: .relaxed) else { return }
        state.withLock { rewatch(&$0) }
    }

    /// Call after reading an entry file, and after renaming one into place:
    /// whenever a value may go to a level above. If the watch was lost, tries
    /// to watch the path again and reports that anything may have changed.
    ///
    /// Called *after* the file access, so the value is covered either way: if
    /// the watch was not lost when checked, it was live when the file was
    /// accessed (then later changes are seen), or its loss is still to be
    /// handled (then that report comes after the access); if it was lost,
    /// this report comes after the access. A composition drops a back-fill
    /// whose read began before such a report, and applies it only after a
    /// write in progress (the set that called this) has finished.
    @inline(__always)
    func ensureWatching() {
        guard watchLost.load(ordering: .sequentiallyConsistent) else { return }
        state.withLock { state in
            guard watchLost.load(ordering: .sequentiallyConsistent) else { return }
            rewatch(&state)
        }
    }

    /// Watches whatever directory is at the path now and reports that
    /// anything may have changed (both under the lock, the report last). If
    /// there is no directory yet, the watch stays lost and the next
    /// ``ensureWatching()`` tries again.
    private func rewatch(_ state: inout State) {
        #if canImport(Glibc)
        if let watcher = state.watcher {
            let failure = watcher.rewatch()
            watchLost.store(failure != nil, ordering: .sequentiallyConsistent)
            if failure == nil {
                // Own deletes whose events went with the old watch (made while
                // it was lost, or dropped by an overflow) would each swallow
                // another writer's later delete of that file. Forget them: the
                // report below covers what they did, and an own delete whose
                // event is still to come is then reported (a spare invalidation).
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

    /// Stops for good (the level is shut down): the watch is cancelled, the
    /// stream of reports ends, keys are no longer noted, and a later ``add``
    /// keeps its listener but watches nothing. A batch of events being
    /// handled meanwhile finds no watcher to move (it never touches the
    /// directory) and its reports go nowhere.
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
                // An overflow (same directory) or the directory gone or moved:
                // watch what is at the path now, if anything.
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
                // No own rename pending: this event is another writer's (ours
                // are noted before they happen).
                if state.withLock({ $0.ownRenames[id] != nil }) {
                    // What the file holds now, read *before* the pending list:
                    // a version of ours in it was noted before its rename, so
                    // it is in the list taken after (its own, later event has
                    // not come yet).
                    let current = fingerprint(path + "/" + name)
                    // The oldest own rename still to be heard is this event's,
                    // unless another writer's came first; the others are
                    // later versions of ours that may already be in the file.
                    let own = state.withLock { state -> [EntryFingerprint] in
                        guard var pending = state.ownRenames[id], !pending.isEmpty else { return [] }
                        let all = pending
                        pending.removeFirst()
                        state.ownRenames[id] = pending.isEmpty ? nil : pending
                        return all
                    }
                    // Our own rename, unless the file now holds a version
                    // that is not ours. A file already gone (this level
                    // evicted it: a checked delete moves it aside, which
                    // sends no event here) changed nothing another writer
                    // made; a delete by another writer has its own event.
                    if !own.isEmpty, current.map(own.contains) ?? true { continue }
                }
                state.withLock { state in
                    if let key = state.keys[id] { report(.key(key), &state) }
                }
            }
        }
    }

    private func report(_ invalidation: CacheInvalidation<Key>, _ state: inout State) {
        // An "anything may have changed" still waiting to be published covers
        // this one too (it is published later than this one would be): while
        // the directory cannot be watched every hit reports one, and a hot
        // loop must not queue them without bound.
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
