extension DiskCacheLevel {
    /// Retires the level for good, so that its directory can be deleted (a
    /// temporary one, say) without the level writing to it or creating it
    /// again afterwards.
    ///
    /// Stops watching the directory, waits for the operations already in
    /// progress (a set that has begun finishes; one that begins later is
    /// turned away), writes out the pending access times and forgets the
    /// index. From its return on, the level does not touch the directory:
    /// - reads answer a miss;
    /// - ``set(_:forKey:expiresAt:)`` and ``remove(_:)`` throw
    ///   ``DiskCacheError/shutDown(path:)``;
    /// - ``clear()``, ``trim(toSize:)``, ``removeExpired()`` and
    ///   ``onMemoryWarning()`` do nothing, and ``count`` and ``totalSize`` are 0;
    /// - the listeners hear nothing more from it (not even that the
    ///   directory was deleted).
    ///
    /// Calling it again, or from several tasks at once, is harmless: each
    /// call returns once the level is retired.
    public func shutdown() async {
        _ = gate.shut()
        changes.stop()
        await gate.drained()
        finalFlush.withLock { _ in
            writeAccessTimes()
            state.withLock { $0.reset() }
        }
    }
}
