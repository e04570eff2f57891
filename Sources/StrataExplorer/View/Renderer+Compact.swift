/// The compact view (`v`): one line per level, for deep pipelines.
extension Renderer {
    /// Draws the levels box, at most `maximumHeight` rows, scrolled so the
    /// focused level is in it; returns the rows used.
    func drawCompactLevels(_ state: ViewState, y: Int, maximumHeight: Int, into buffer: inout CellBuffer) -> Int {
        var focusedIndex: Int?
        if case .level(let index) = state.focus { focusedIndex = index }
        return drawLevelLines(state.panes, title: [("levels", .label), (" one line each (v: panes)", .dim)],
                              focus: focusedIndex, y: y, maximumHeight: maximumHeight, into: &buffer)
    }

    /// Draws `panes` one line each in a box titled `title`, at most
    /// `maximumHeight` rows, scrolled so the level at `focus` is in it (a
    /// click on a line focuses `target` of its index: compare mode's side B
    /// gives `.levelB`); `counts`: gets and hits as totals rather than a rate
    /// (compare mode). Returns the rows used.
    func drawLevelLines(_ panes: [PaneState], title: [(String, Role)], focus focusedIndex: Int?,
                        target: (Int) -> Focus = Focus.level, counts: Bool = false,
                        y: Int, maximumHeight: Int, into buffer: inout CellBuffer) -> Int {
        let height = min(panes.count + 2, maximumHeight)
        guard height >= 3 else { return 0 }
        let rows = height - 2
        let first = focusedIndex.map { $0 >= rows ? $0 - rows + 1 : 0 } ?? 0
        let focused = focusedIndex != nil
        var title = title
        if panes.count > rows { title.append((" · \(first + 1)-\(first + rows) of \(panes.count)", .dim)) }
        buffer.box(x: 0, y: y, width: buffer.width, height: height, title: title,
                   glyphs: focused ? focusedGlyphs : glyphs, role: focused ? .focus : .border)
        let nameWidth = min(16, panes.map { TextWidth.of($0.name) }.max() ?? 0)
        for (row, (index, pane)) in panes.enumerated().dropFirst(first).prefix(rows).enumerated() {
            let lineY = y + 1 + row
            buffer.regions.append(.init(focus: target(index), rows: lineY..<(lineY + 1)))
            if index == focusedIndex { buffer.put("›", x: 1, y: lineY, role: .focus) }
            buffer.put(pane.name, x: 2, y: lineY, role: .label, limit: nameWidth, ellipsis: true)
            var line = Line(buffer: buffer, x: 3 + nameWidth, y: lineY, limit: buffer.width - 5 - nameWidth)
            let s = pane.stats
            let answered = s.hits + s.misses + s.errors
            if let on = pane.conditionOn {
                let number = pane.toggleNumber.map { "\($0) " } ?? ""
                line.text(on ? "[\(number)on]  " : "[\(number)OFF]  ", on ? .toggleOn : .toggleOff)
            }
            line.pair("hit", answered == 0 ? "-" : String(format: "%.1f%%", s.hitRatio * 100), ratioRole(s))
            if counts {
                line.pair("gets", Units.count(Double(s.gets)), .value)
                line.pair("hits", Units.count(Double(s.hits)), .hit)
            } else {
                line.pair("gets/s", Units.count(pane.getsPerSecond), .value)
            }
            if s.errors + s.setErrors > 0 { line.pair("errors", Units.count(Double(s.errors + s.setErrors)), .error) }
            line.pair("p99", Units.latency(s.getP99), .value)
            if let entries = pane.entries {
                line.pair("entries", "\(entries)" + (pane.countLimit.map { "/\($0)" } ?? ""), .value)
            }
            if let bytes = pane.bytes {
                line.pair("bytes", Units.shortBytes(bytes) + (pane.capacity.map { "/" + Units.shortBytes($0) } ?? ""), .value)
            }
            buffer = line.buffer
        }
        return height
    }
}
