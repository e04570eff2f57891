import Strata

/// A disk level in a fresh temporary directory of this process (a disk
/// level given no `path`): nobody else writes it, so a refresh ahead of
/// expiry stores the refreshed value, as a memory level does. (A disk level
/// on its own removes the key instead: its directory may be shared, and it
/// cannot replace a value only if it still holds the one the stack saw.)
/// Everything else passes through.
struct PrivateDirectoryLevel<Inner: CacheLevel>: PassThroughLevel {
    typealias Key = Inner.Key
    typealias Value = Inner.Value

    let inner: Inner

    init(_ inner: Inner) { self.inner = inner }

    /// Only this process writes the directory: the fill is stored.
    func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws {
        try await inner.set(fill.value, forKey: key, expiresAt: fill.expiresAt)
    }
}
