/// A stored value read by ``LevelInspector/peek``: not counted as a get, not
/// promoted in the level's policy, back-filled nowhere.
package struct PeekedEntry<Value> {
    package var value: Value
    /// When it expires; `nil` when it never does.
    package var expiresAt: CacheInstant?
    /// Bytes stored (a disk file, a Redis string, a memory level's cost).
    package var size: Int?
    /// Whether the level counted the peek as an access in its own eviction
    /// bookkeeping, beyond this process's control (a Redis server older than
    /// 7.2, which has no `CLIENT NO-TOUCH`, updates the key's LRU/LFU clock).
    package var countedAsAccess: Bool

    package init(value: Value, expiresAt: CacheInstant? = nil, size: Int? = nil, countedAsAccess: Bool = false) {
        self.value = value
        self.expiresAt = expiresAt
        self.size = size
        self.countedAsAccess = countedAsAccess
    }
}

extension PeekedEntry: Sendable where Value: Sendable {}
extension PeekedEntry: Equatable where Value: Equatable {}
