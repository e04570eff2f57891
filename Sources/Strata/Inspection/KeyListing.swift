/// Keys a ``LevelInspector`` listed, and whether they are all the level holds.
package struct KeyListing: Equatable, Sendable {
    package var keys: [KeyInspection]
    /// Whether the listing ended because the level had no more keys, not at
    /// its limit (or a bounded `SCAN`'s last round): otherwise a sample.
    package var isComplete: Bool

    package init(keys: [KeyInspection], isComplete: Bool) {
        self.keys = keys
        self.isComplete = isComplete
    }

    /// `keys` listed for a `limit`: complete when fewer came back (for levels
    /// whose listing stops only at the limit or the last key).
    package init(keys: [KeyInspection], limit: Int) {
        self.init(keys: keys, isComplete: keys.count < limit)
    }
}
