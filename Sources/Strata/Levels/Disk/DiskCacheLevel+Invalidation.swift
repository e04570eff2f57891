extension DiskCacheLevel {
    /// Subscribes `listener` to entries that other writers on this directory
    /// (other processes, or other disk levels in this one) replace or delete.
    /// The first registration starts an inotify watch (one inotify instance
    /// serves every disk level of the process). If the directory cannot be
    /// watched (the per-user watch limit reached), a warning is logged and,
    /// until it can be, every read that finds an entry and every write
    /// reports that anything may have changed: the levels above keep
    /// nothing from this level, so they never serve what another writer
    /// replaced unheard.
    public func subscribe(_ listener: @escaping @Sendable (CacheInvalidation<Key>) async -> Void) -> CacheSubscription {
        let (subscription, failure) = changes.add(listener, path: path) { EntryFingerprint.ofFile($0) }
        if let failure {
            logger.warning("cannot watch the cache directory; levels above keep nothing from it until it can be watched",
                           metadata: ["directory": "\(path)", "error": "\(DiskCacheError.text(failure))"])
        }
        return subscription
    }

    /// A stack that kept this level coherent with a level below it that
    /// reports changes (`disk + redis`) is gone: nothing tells this level of
    /// those changes any more. Every entry written until now reads as a miss
    /// from now on (the files stay: other processes' stacks may trust them,
    /// and a back-fill replaces them).
    public func lostCoherence() {
        coherentSince.store(EntryFingerprint.nextCreationTime(), ordering: .relaxed)
    }

    /// `true` while levels above listen to this one and its directory is not
    /// watched: it was deleted or moved and no directory is back at the path,
    /// or the per-user inotify watch limit is reached. Meanwhile the levels
    /// above keep nothing from this level (each read and write tries to watch
    /// again). `false` when watched, and when nothing listens.
    public var isUnwatched: Bool { changes.isWatchLost }
}

