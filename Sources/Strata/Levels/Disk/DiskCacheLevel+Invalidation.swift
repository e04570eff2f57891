extension DiskCacheLevel {
    /// Registers `listener` for entries that other writers on this directory
    /// (other processes, or other disk levels in this one) replace or delete.
    /// The first registration starts an inotify watch; if inotify cannot be
    /// set up (watch limit), a warning is logged and nothing is reported.
    public func addInvalidationListener(_ listener: @escaping @Sendable (CacheInvalidation<Key>) async -> Void) {
        let failure = changes.add(listener, path: path) { EntryFingerprint.ofFile($0) }
        if let failure {
            logger.warning("cannot watch the cache directory; levels above will not hear of other writers",
                           metadata: ["directory": "\(path)", "error": "\(DiskCacheError.text(failure))"])
        }
    }
}
