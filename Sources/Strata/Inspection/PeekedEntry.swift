/// A stored value read by ``LevelInspector/peek``: not counted as a get, not
/// promoted in the level's policy, back-filled nowhere.
package struct PeekedEntry<Value> {
    package var value: Value
    /// When it expires; `nil` when it never does.
    package var expiresAt: CacheInstant?
    /// Bytes stored (a disk file, a Redis string, a memory level's cost).
    package var size: Int?

    package init(value: Value, expiresAt: CacheInstant? = nil, size: Int? = nil) {
        self.value = value
        self.expiresAt = expiresAt
        self.size = size
    }
}

extension PeekedEntry: Sendable where Value: Sendable {}
extension PeekedEntry: Equatable where Value: Equatable {}
