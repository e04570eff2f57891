/// Compare mode (`strata --config A --compare B`): both sides' levels, then
/// the comparison strip, above the event log.
extension Renderer {
    /// The narrowest terminal that shows the two sides' panes side by side;
    /// a narrower one (or `v`) shows a table per side, one line per level.
    public static let comparePanesWidth = 120

    /// Rows the event log keeps under the comparison, at least.
    static let compareMinimumLog = 3

    /// Help lines for compare mode.
    static let compareHelp: [(String, String)] = [
        ("strata --config A --compare B", "compare mode: every command and workload goes to A and B"),
        ("set-capacity B:L1 64", "compare mode: live edits, save and export take a side"),
        ("clear A:L1 · toggle B:NAME", "compare mode: one side; a plain name acts on both"),
    ]

    /// Whether a `width` × `height` frame of `state` shows compare mode's
    /// sides as panes in two columns (A left, B right) rather than a table
    /// per side, A's above B's (the app moves the focus to match).
    public static func comparesSideBySide(_ state: ViewState, width: Int, height: Int) -> Bool {
        guard let comparison = state.comparison else { return false }
        // The middle of the screen: below the title, above the status and footer.
        return sideBySide(state, comparison, width: width, available: height - 3)
    }

    static func sideBySide(_ state: ViewState, _ comparison: ComparisonView, width: Int, available: Int) -> Bool {
        let deepest = max(state.panes.count, comparison.panesB.count)
        return !state.compact && width >= comparePanesWidth
            && 1 + deepest * paneHeight + comparison.rows.count + 2 + compareMinimumLog <= available
    }

    /// Draws both sides and the strip from row `top`, above `bottom`
    /// (exclusive); returns the rows used. The focused level is highlighted
    /// on its side, and a press on either side's level focuses it.
    func drawComparison(_ state: ViewState, _ comparison: ComparisonView, top: Int, bottom: Int,
                        into buffer: inout CellBuffer) -> Int {
        var focusedA: Int?, focusedB: Int?
        switch state.focus {
        case .level(let index) where index < state.panes.count: focusedA = index
        case .levelB(let index) where index < comparison.panesB.count: focusedB = index
        default: break
        }
        var y = top
        if Self.sideBySide(state, comparison, width: buffer.width, available: bottom - top) {
            let half = buffer.width / 2
            buffer.put(" " + comparison.labelA, x: 0, y: y, role: .label, limit: half - 1, ellipsis: true)
            buffer.put(" " + comparison.labelB, x: half, y: y, role: .label, limit: buffer.width - half - 1, ellipsis: true)
            y += 1
            for (index, pane) in state.panes.enumerated() {
                let paneY = y + index * Self.paneHeight
                drawPane(pane, x: 0, y: paneY, width: half, focused: focusedA == index, into: &buffer)
                buffer.regions.append(.init(focus: .level(index), rows: paneY..<(paneY + Self.paneHeight), columns: 0..<half))
            }
            for (index, pane) in comparison.panesB.enumerated() {
                let paneY = y + index * Self.paneHeight
                drawPane(pane, x: half, y: paneY, width: buffer.width - half, focused: focusedB == index, into: &buffer)
                buffer.regions.append(.init(focus: .levelB(index), rows: paneY..<(paneY + Self.paneHeight),
                                            columns: half..<buffer.width))
            }
            y += max(state.panes.count, comparison.panesB.count) * Self.paneHeight
        } else {
            let stripHeight = comparison.rows.count + 2
            let room = max(3, (bottom - top - stripHeight - Self.compareMinimumLog) / 2)
            y += drawLevelLines(state.panes, title: [(comparison.labelA, .label)], focus: focusedA, counts: true,
                                y: y, maximumHeight: room, into: &buffer)
            y += drawLevelLines(comparison.panesB, title: [(comparison.labelB, .label)], focus: focusedB, target: Focus.levelB,
                                counts: true, y: y, maximumHeight: room, into: &buffer)
        }
        y += drawStrip(comparison.rows, y: y, maximumHeight: bottom - y - 1, into: &buffer)
        return y - top
    }

    /// The comparison strip: a header row, then one row per figure (what, A,
    /// B, B − A), aligned; returns the rows used (none when under 3 fit).
    func drawStrip(_ rows: [[String]], y: Int, maximumHeight: Int, into buffer: inout CellBuffer) -> Int {
        let height = min(rows.count + 2, maximumHeight)
        guard height >= 3 else { return 0 }
        buffer.box(x: 0, y: y, width: buffer.width, height: height, title: [("comparison", .label), (" B - A", .dim)],
                   glyphs: glyphs, role: .border)
        for (row, line) in ScriptRunner.aligned(rows).prefix(height - 2).enumerated() {
            buffer.put(line, x: 2, y: y + 1 + row, role: row == 0 ? .dim : .value, limit: buffer.width - 4, ellipsis: true)
        }
        return height
    }
}
