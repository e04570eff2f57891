/// The hottest keys of a level, as ``LevelInspector/hotKeys(_:)`` found them,
/// and whether they are the whole level's or a sample's.
package struct HotKeys: Equatable, Sendable {
    /// Hottest first: by frequency estimate, then hits, then key.
    package var keys: [KeyInspection]
    /// Keys ranked (every unexpired key of the level when ``isWholeLevel``).
    package var examined: Int
    /// Whether every key of the level was ranked; otherwise only `examined`
    /// of them (the first listed, or a bounded `SCAN`): a sample.
    package var isWholeLevel: Bool

    package init(keys: [KeyInspection], examined: Int, isWholeLevel: Bool) {
        self.keys = keys
        self.examined = examined
        self.isWholeLevel = isWholeLevel
    }
}
