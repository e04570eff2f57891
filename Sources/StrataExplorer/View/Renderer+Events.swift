/// The event log pane and an event's detail.
extension Renderer {
    /// The log, newest first, scrolled so the selected event is in view. With
    /// focus the selected line is marked `›`; the title says the filter and
    /// where the selection is.
    func drawEvents(_ state: ViewState, y: Int, height: Int, into buffer: inout CellBuffer) {
        guard height >= 2 else { return }
        let focused = state.focus == .events
        let events = state.events
        let rows = max(0, height - 2)
        let selection = min(max(0, state.eventSelection), max(0, events.count - 1))
        let first = selection >= rows ? selection - rows + 1 : 0
        var title: [(String, Role)] = [("events", .label), (" newest first", .dim)]
        if let filter = state.eventFilter {
            title.append((" · /\(filter) \(events.count) of \(state.eventTotal)", .value))
        }
        if focused && !events.isEmpty {
            title.append((" · \(selection + 1)/\(events.count)", .dim))
            if first > 0 { title.append((" ↑\(first) newer", .dim)) }
        }
        buffer.box(x: 0, y: y, width: buffer.width, height: height, title: title,
                   glyphs: focused ? focusedGlyphs : glyphs, role: focused ? .focus : .border)
        buffer.regions.append(.init(focus: .events, rows: y..<(y + height)))
        for (row, (index, event)) in events.enumerated().dropFirst(first).prefix(rows).enumerated() {
            let lineY = y + 1 + row
            if focused && index == selection { buffer.put("›", x: 1, y: lineY, role: .focus) }
            let used = buffer.put(event.time + " ", x: 2, y: lineY, role: .dim, limit: buffer.width - 4)
            buffer.put(event.text, x: 2 + used, y: lineY, role: event.isError ? .error : .normal,
                       limit: max(0, buffer.width - 4 - used), ellipsis: true)
        }
        if events.isEmpty && state.eventFilter != nil {
            buffer.put("nothing matches /\(state.eventFilter ?? "") (Esc clears the filter)", x: 2, y: y + 1, role: .dim,
                       limit: buffer.width - 4, ellipsis: true)
        }
    }

    /// One event in full over the middle of the screen: a step of its path a
    /// line, long text wrapped, never cut.
    func drawDetail(_ event: EventLine, into buffer: inout CellBuffer) {
        let width = min(buffer.width - 2, 100)
        // One step of the path a line (each level's outcome and latency), wrapped.
        let steps = event.text.components(separatedBy: " → ")
        let lines = steps.enumerated().flatMap { index, step in
            Self.wrapHard(index == 0 ? step : "→ " + step, width: width - 4)
        }
        let height = min(buffer.height - 2, lines.count + 4)
        let x = (buffer.width - width) / 2, y = max(1, (buffer.height - height) / 2)
        for row in y..<(y + height) { buffer.fill(" ", x: x, y: row, count: width, role: .helpText) }
        buffer.box(x: x, y: y, width: width, height: height,
                   title: [("event \(event.time)", .helpKey), (" Esc closes", .helpText)], glyphs: glyphs, role: .helpText)
        let shown = max(0, height - 4)
        for (row, line) in lines.prefix(shown).enumerated() {
            buffer.put(line, x: x + 2, y: y + 2 + row, role: event.isError ? .error : .helpText, limit: width - 4)
        }
        if lines.count > shown, shown > 0 {
            buffer.put(lines[shown - 1] + " " + lines[shown], x: x + 2, y: y + 1 + shown,
                       role: event.isError ? .error : .helpText, limit: width - 4, ellipsis: true)
        }
    }

    /// `text` in lines of `width` columns: broken at spaces, and inside words
    /// longer than a line.
    static func wrapHard(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var current = ""
        var used = 0
        func flush() { lines.append(current); current = ""; used = 0 }
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let wordWidth = word.reduce(0) { $0 + TextWidth.of($1) }
            if used > 0 && used + 1 + wordWidth > width { flush() }
            if used > 0 { current.append(" "); used += 1 }
            for character in word {
                let w = TextWidth.of(character)
                if used + w > width { flush() }
                current.append(character)
                used += w
            }
        }
        if !current.isEmpty || lines.isEmpty { lines.append(current) }
        return lines
    }
}
