/// What focus moves over in compare mode: each side's level names, and
/// whether the sides are drawn side by side (panes in two columns: `j`/`k`
/// stay in a column, `←`/`→` cross to the other) or one table above the
/// other (`j`/`k` walk A's levels, then B's).
public struct CompareSides: Equatable, Sendable {
    public var a: [String]
    public var b: [String]
    public var sideBySide: Bool

    public init(a: [String], b: [String], sideBySide: Bool = false) {
        self.a = a
        self.b = b
        self.sideBySide = sideBySide
    }

    /// `B:L1`: the name compare mode's commands take for a side's level.
    func name(_ side: ComparisonModel.Side, _ index: Int) -> String? {
        let names = side == .a ? a : b
        return index < names.count ? "\(side.rawValue):\(names[index])" : nil
    }
}
