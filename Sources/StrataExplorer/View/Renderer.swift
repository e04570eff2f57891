import Strata

/// Draws a ``ViewState`` into a ``CellBuffer``: pure, so frames are testable as text.
///
/// Layout, top to bottom: a title bar, one pane per level (5 rows each) in
/// pipeline order, the event log (newest first), the status or command line,
/// and the key-hint footer. Levels that do not fit are summarised on one line
/// above the log; nothing is ever drawn over anything else.
public struct Renderer: Sendable {
    public var glyphs: BoxGlyphs
    public var focusedGlyphs: BoxGlyphs
    public var unicode: Bool

    public static let paneHeight = 5
    public static let minimumWidth = 40
    public static let minimumHeight = 8

    public init(unicode: Bool) {
        self.unicode = unicode
        glyphs = unicode ? .unicode : .ascii
        focusedGlyphs = unicode ? .unicodeFocused : .asciiFocused
    }

    public func render(_ state: ViewState, width: Int, height: Int) -> CellBuffer {
        var buffer = CellBuffer(width: width, height: height, ascii: !unicode)
        guard width >= Self.minimumWidth, height >= Self.minimumHeight else {
            let message = "terminal too small (\(width)x\(height)); strata needs \(Self.minimumWidth)x\(Self.minimumHeight)"
            let lines = Self.wrap(message, width: width)
            for (row, line) in lines.prefix(max(0, height)).enumerated() {
                let last = row == height - 1 && lines.count > height
                buffer.put(last ? line + " " + lines[(row + 1)...].joined(separator: " ") : line,
                           x: 0, y: row, role: .error, ellipsis: true)
            }
            return buffer
        }
        drawTitle(state, into: &buffer)
        let middleTop = 1, middleBottom = height - 2  // exclusive
        var y = middleTop
        let zoomedLevel: Int? = if state.zoomed, case .level(let index) = state.focus, index < state.panes.count { index } else { nil }
        if let inspector = state.inspector {
            drawInspector(inspector, y: y, height: middleBottom - y, into: &buffer)
            drawStatus(state, y: height - 2, into: &buffer)
            drawFooter(y: height - 1, hints: KeyHelp.inspectorFooter, into: &buffer)
            if let preview = inspector.preview { drawPreview(preview, into: &buffer) }
            if state.showHelp { drawHelp(scroll: state.helpScroll, into: &buffer) }
            return buffer
        }
        if state.zoomed && state.focus == .events {
            // The log alone.
        } else if let comparison = state.comparison {
            y += drawComparison(state, comparison, top: y, bottom: middleBottom, into: &buffer)
        } else if let zoomedLevel {
            drawPane(state.panes[zoomedLevel], y: y, focused: true, into: &buffer)
            buffer.regions.append(.init(focus: .level(zoomedLevel), rows: y..<(y + Self.paneHeight)))
            y += Self.paneHeight
            // The room the zoom frees: labelled graphs and the latency histogram.
            let graphRows = drawZoomedGraphs(state.panes[zoomedLevel], y: y, height: middleBottom - y - 4, into: &buffer)
            if graphRows > 0 {
                buffer.regions.append(.init(focus: .level(zoomedLevel), rows: y..<(y + graphRows)))
                y += graphRows
            }
        } else if state.compact {
            y += drawCompactLevels(state, y: y, maximumHeight: middleBottom - middleTop - 4, into: &buffer)
        } else {
            let available = middleBottom - middleTop
            let minimumLog = 4
            var shown = state.panes.count
            var summaryRows = 0
            if shown * Self.paneHeight + minimumLog > available {
                summaryRows = 1
                shown = max(0, (available - minimumLog - summaryRows) / Self.paneHeight)
            }
            // Levels that do not fit are reached by moving the focus: the
            // focused one is always among those drawn.
            var first = 0
            if case .level(let index) = state.focus, index >= shown { first = min(index - shown + 1, state.panes.count - shown) }
            for (index, pane) in state.panes.enumerated().dropFirst(first).prefix(shown) {
                drawPane(pane, y: y, focused: state.focus == .level(index), into: &buffer)
                buffer.regions.append(.init(focus: .level(index), rows: y..<(y + Self.paneHeight)))
                y += Self.paneHeight
            }
            if summaryRows > 0 {
                let hidden = Array(state.panes.prefix(first)) + Array(state.panes.dropFirst(first + shown))
                drawSummary(hidden, y: y, into: &buffer)
                y += 1
            }
        }
        drawEvents(state, y: y, height: middleBottom - y, into: &buffer)
        drawStatus(state, y: height - 2, into: &buffer)
        drawFooter(y: height - 1, into: &buffer)
        if let detail = state.detail { drawDetail(detail, into: &buffer) }
        if state.showHelp { drawHelp(scroll: state.helpScroll, into: &buffer) }
        return buffer
    }

    // MARK: Parts

    func drawTitle(_ state: ViewState, into buffer: inout CellBuffer) {
        buffer.fill(" ", x: 0, y: 0, count: buffer.width, role: .title)
        var left = " strata · \(state.title)"
        if let recording = state.recording { left += "  ● \(recording)" }
        if state.paused { left += "  ‖ PAUSED" }
        if let workload = state.workload { left += "  ▶ \(workload)" }
        if let resilience = state.resilience { left += "  · \(resilience)" }
        if !unicode { left = left.replacingOccurrences(of: "‖", with: "||").replacingOccurrences(of: "▶", with: ">")
            .replacingOccurrences(of: "●", with: "*") }
        let right = "\(state.hz) Hz · \(state.theme) "
        let rightWidth = TextWidth.of(right)
        buffer.put(left, x: 0, y: 0, role: .title, limit: max(0, buffer.width - rightWidth - 1), ellipsis: true)
        buffer.put(right, x: buffer.width - rightWidth, y: 0, role: .title)
    }

    /// Draws a level's pane at (`x`, `y`), `width` columns wide (default: the whole row).
    func drawPane(_ pane: PaneState, x left: Int = 0, y: Int, width paneWidth: Int? = nil, focused: Bool = false,
                  into buffer: inout CellBuffer) {
        let paneWidth = paneWidth ?? buffer.width
        // "origin · origin · pooled" reads badly: skip the kind when it is the name.
        let summary = pane.summary.hasPrefix(pane.name + " · ") ? String(pane.summary.dropFirst(pane.name.count + 3))
            : (pane.summary == pane.name ? "" : pane.summary)
        var title: [(String, Role)] = [(pane.name, .label)]
        if !summary.isEmpty { title.append((" · " + summary, .dim)) }
        if !pane.configuration.isEmpty { title.append((" · " + pane.configuration, .dim)) }
        if let on = pane.conditionOn {
            let number = pane.toggleNumber.map { "\($0) " } ?? ""
            title.append((on ? " [\(number)on]" : " [\(number)OFF]", on ? .toggleOn : .toggleOff))
        }
        if pane.lastError != nil && pane.stats.errors + pane.stats.setErrors + pane.stats.backfillFailures > 0 {
            title.append((unicode ? " ⚠" : " !", .error))
        }
        buffer.box(x: left, y: y, width: paneWidth, height: Self.paneHeight, title: title,
                   glyphs: focused ? focusedGlyphs : glyphs, role: focused ? .focus : .border)
        let inner = paneWidth - 4
        let s = pane.stats
        var line = Line(buffer: buffer, x: left + 2, y: y + 1, limit: inner)
        line.pair("gets", Units.count(Double(s.gets)), .value)
        line.pair("hits", Units.count(Double(s.hits)), .hit)
        line.pair("misses", Units.count(Double(s.misses)), .miss)
        line.pair("hit", s.requests == 0 ? "-" : String(format: "%.1f%%", s.hitRatio * 100), ratioRole(s))
        let spark = sparkline(pane.sparkline, width: min(30, max(0, inner - line.used - 2)))
        buffer = line.buffer
        if !spark.isEmpty { buffer.put(spark, x: left + 2 + inner - TextWidth.of(spark), y: y + 1, role: .sparkline) }

        line = Line(buffer: buffer, x: left + 2, y: y + 2, limit: inner)
        line.pair("sets", Units.count(Double(s.sets)), .value)
        line.pair("rm", Units.count(Double(s.removes)), .value)
        if s.invalidations > 0 { line.pair("inv", Units.count(Double(s.invalidations)), .value) }
        line.pair("errors", Units.count(Double(s.errors + s.setErrors)), s.errors + s.setErrors > 0 ? .error : .value)
        line.pair("back-fills", Units.count(Double(s.backfills)), .value)
        if s.backfillFailures > 0 { line.pair("failed", Units.count(Double(s.backfillFailures)), .error) }
        line.pair("p50", Units.latency(s.getP50), .value)
        line.pair("p99", Units.latency(s.getP99), .value)
        buffer = line.buffer

        line = Line(buffer: buffer, x: left + 2, y: y + 3, limit: inner)
        if let entries = pane.entries {
            line.pair("entries", "\(entries)" + (pane.countLimit.map { "/\($0)" } ?? ""), .value)
        }
        if let bytes = pane.bytes {
            line.pair("bytes", Units.shortBytes(bytes) + (pane.capacity.map { "/" + Units.shortBytes($0) } ?? ""), .value)
        }
        line.pair("gets/s", Units.count(pane.getsPerSecond), .value)
        line.pair("hits/s", Units.count(pane.hitsPerSecond), .hit)
        if let error = pane.lastError, s.errors + s.setErrors + s.backfillFailures > 0 {
            line.text("last error: " + error, .error)
        }
        buffer = line.buffer
        // A meter of how full the level is (bytes or entries, the fuller), where there is room.
        let fractions = [pane.bytes.flatMap { b in pane.capacity.map { Double(b) / Double(max(1, $0)) } },
                         pane.entries.flatMap { e in pane.countLimit.map { Double(e) / Double(max(1, $0)) } }]
        if let full = fractions.compactMap({ $0 }).max() {
            let bar = meter(full, width: 10)
            let text = bar + String(format: " %3.0f%%", min(1, full) * 100)
            let width = TextWidth.of(text)
            if line.used + width + 2 <= inner {
                buffer.put(text, x: left + 2 + inner - width, y: y + 3, role: full >= 0.95 ? .miss : .sparkline)
            }
        }
    }

    /// `fraction` (0...1) as a bar `width` cells wide, eighths included:
    /// `▕██████▌   ▏` (ASCII `[######    ]`).
    func meter(_ fraction: Double, width: Int) -> String {
        let eighths = Int((min(1, max(0, fraction)) * Double(width * 8)).rounded())
        if !unicode {
            let filled = (eighths + 4) / 8
            return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
        }
        let partial: [String] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
        var bar = String(repeating: "█", count: eighths / 8)
        if eighths % 8 > 0 { bar += partial[eighths % 8] }
        return "▕" + bar + String(repeating: " ", count: width - TextWidth.of(bar)) + "▏"
    }

    func ratioRole(_ s: StatisticsSnapshot) -> Role {
        if s.requests == 0 { return .value }
        return s.hitRatio >= 0.8 ? .hit : (s.hitRatio >= 0.4 ? .value : .miss)
    }

    func drawSummary(_ panes: [PaneState], y: Int, into buffer: inout CellBuffer) {
        let parts = panes.map { pane -> String in
            let ratio = pane.stats.requests == 0 ? "-" : String(format: "%.0f%%", pane.stats.hitRatio * 100)
            return "\(pane.name) \(ratio) \(Units.count(pane.getsPerSecond))/s"
        }
        buffer.put(" +\(panes.count) more (enlarge the terminal): " + parts.joined(separator: " · "), x: 0, y: y, role: .dim,
                   ellipsis: true)
    }

    func drawStatus(_ state: ViewState, y: Int, into buffer: inout CellBuffer) {
        if let command = state.commandLine {
            drawCommandLine(command, charactersAfterCursor: state.commandCursor, y: y, into: &buffer)
            return
        }
        if let filter = state.filterLine {
            drawCommandLine(filter, charactersAfterCursor: state.filterCursor, prompt: "/", y: y, into: &buffer)
            return
        }
        let role: Role = state.status.isError ? .statusError : .status
        buffer.fill(" ", x: 0, y: y, count: buffer.width, role: role)
        buffer.put(" " + state.status.message, x: 0, y: y, role: role, limit: buffer.width - 1, ellipsis: true)
    }

    /// The `:` line with its cursor. Only the characters near the cursor are
    /// walked, never the whole line (a pasted megabyte would make every frame
    /// slow): up to a third of the width after the cursor, the rest before it.
    /// A cut on either side shows as `…`.
    func drawCommandLine(_ command: String, charactersAfterCursor: Int, prompt: String = ":", y: Int,
                         into buffer: inout CellBuffer) {
        buffer.fill(" ", x: 0, y: y, count: buffer.width, role: .command)
        let room = buffer.width - 2  // the prompt and the right edge
        let cursorAt = command.index(command.endIndex, offsetBy: -charactersAfterCursor, limitedBy: command.startIndex)
            ?? command.startIndex
        let atEnd = cursorAt == command.endIndex
        let cursor: Character = atEnd ? (unicode ? "█" : "_") : command[cursorAt]
        var used = TextWidth.of(cursor)
        var after: [Character] = []
        var afterCut = false
        if !atEnd {
            let budget = max(0, room / 3)
            for character in command[command.index(after: cursorAt)...] {
                let w = TextWidth.of(character)
                if used + w > budget { afterCut = true; break }
                after.append(character)
                used += w
            }
            if afterCut { used += 1 }
        }
        var before: [Character] = []
        var beforeCut = false
        for character in command[..<cursorAt].reversed() {
            let w = TextWidth.of(character)
            if used + w > room { beforeCut = true; break }
            before.append(character)
            used += w
        }
        var x = buffer.put(beforeCut ? (unicode ? "…" : "<") : prompt, x: 0, y: y, role: .command)
        x += buffer.put(String(before.reversed()), x: x, y: y, role: .command)
        x += buffer.put(String(cursor), x: x, y: y, role: atEnd ? .command : .cursor)
        x += buffer.put(String(after), x: x, y: y, role: .command)
        if afterCut { buffer.put(unicode ? "…" : ">", x: x, y: y, role: .command) }
    }

    /// Key hints left to right; when they do not all fit, `? help` and
    /// `q quit` stay and `…` marks the hints left out.
    func drawFooter(y: Int, hints: [(key: String, label: String)] = KeyHelp.footer, into buffer: inout CellBuffer) {
        buffer.fill(" ", x: 0, y: y, count: buffer.width - 1, role: .footer)
        func width(_ hint: (key: String, label: String)) -> Int { TextWidth.of(hint.key) + TextWidth.of(hint.label) + 3 }
        let limit = buffer.width - 1  // never the bottom-right cell
        var x = 1
        func draw(_ hint: (key: String, label: String)) {
            x += buffer.put(hint.key, x: x, y: y, role: .footerKey)
            x += buffer.put(" " + hint.label + "  ", x: x, y: y, role: .footer)
        }
        if 1 + hints.reduce(0, { $0 + width($1) }) <= limit {
            for hint in hints { draw(hint) }
            return
        }
        let essential = hints.suffix(2)
        let mark = buffer.ellipsis + " "
        let reserved = essential.reduce(0) { $0 + width($1) } + TextWidth.of(mark)
        for hint in hints.dropLast(2) {
            if x + width(hint) + reserved > limit { break }
            draw(hint)
        }
        x += buffer.put(mark, x: x, y: y, role: .footer)
        for hint in essential where x + width(hint) <= limit + 2 { draw(hint) }
    }

    /// Help lines: keys, a gap, commands.
    static var helpLines: [(String, String)] {
        var lines: [(String, String)] = KeyHelp.keys.map { ($0.key, $0.meaning) }
        lines.append(("", ""))
        lines.append(contentsOf: Command.reference.map { (":" + $0.syntax, $0.meaning) })
        lines.append(("", ""))
        lines.append(contentsOf: compareHelp)
        return lines
    }

    /// How far the help overlay can scroll on a screen `height` rows high.
    public static func helpMaxScroll(height: Int) -> Int {
        let lines = helpLines.count
        let visible = max(0, min(height - 2, lines + 2) - 2)
        return max(0, lines - visible)
    }

    func drawHelp(scroll: Int, into buffer: inout CellBuffer) {
        let lines = Self.helpLines
        let width = min(buffer.width - 2, 92)
        let height = min(buffer.height - 2, lines.count + 2)
        let visible = max(0, height - 2)
        let first = min(max(0, scroll), Self.helpMaxScroll(height: buffer.height))
        let x = (buffer.width - width) / 2, y = (buffer.height - height) / 2
        for row in y..<(y + height) { buffer.fill(" ", x: x, y: row, count: width, role: .helpText) }
        var title: [(String, Role)] = [("help", .helpKey), (" Esc closes", .helpText)]
        let above = first > 0, below = first + visible < lines.count
        if above || below {
            title.append((" · " + (above ? "↑" : "") + (below ? "↓" : "") + " more (↑/↓ scroll)", .helpText))
        }
        buffer.box(x: x, y: y, width: width, height: height, title: title, glyphs: glyphs, role: .helpText)
        let keyWidth = min(32, lines.map { TextWidth.of($0.0) }.max() ?? 0)
        for (row, (key, meaning)) in lines.dropFirst(first).prefix(visible).enumerated() {
            buffer.put(key, x: x + 2, y: y + 1 + row, role: .helpKey, limit: keyWidth, ellipsis: true)
            buffer.put(meaning, x: x + 3 + keyWidth, y: y + 1 + row, role: .helpText, limit: max(0, width - keyWidth - 5),
                       ellipsis: true)
        }
    }

    /// `text` in lines of at most `width` columns, broken at spaces.
    static func wrap(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        var current = ""
        for word in text.split(separator: " ") {
            let candidate = current.isEmpty ? String(word) : current + " " + word
            if TextWidth.of(candidate) <= width || current.isEmpty {
                current = candidate
            } else {
                lines.append(current)
                current = String(word)
            }
        }
        if !current.isEmpty { lines.append(current) }
        return lines
    }

    /// Hit ratio per second as bars: `▁▂▃▄▅▆▇█` (ASCII: `_.-=+*#@`), gaps as spaces.
    func sparkline(_ values: [Double?], width: Int) -> String {
        guard width > 0, !values.isEmpty else { return "" }
        let bars: [Character] = unicode ? ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"] : ["_", ".", "-", "=", "+", "*", "#", "@"]
        return String(values.suffix(width).map { value -> Character in
            guard let value else { return " " }
            return bars[min(bars.count - 1, max(0, Int((value * Double(bars.count - 1)).rounded())))]
        })
    }
}

/// Lays `label value` pairs along a row, stopping at the edge.
struct Line {
    var buffer: CellBuffer
    let x: Int
    let y: Int
    let limit: Int
    var used = 0

    mutating func pair(_ label: String, _ value: String, _ role: Role) {
        let needed = TextWidth.of(label) + 1 + TextWidth.of(value) + 2
        guard used + needed <= limit else { used = limit; return }
        used += buffer.put(label + " ", x: x + used, y: y, role: .dim)
        used += buffer.put(value, x: x + used, y: y, role: role)
        used += buffer.put("  ", x: x + used, y: y, role: .normal)
    }

    mutating func text(_ text: String, _ role: Role) {
        guard used < limit else { return }
        used += buffer.put(text, x: x + used, y: y, role: role, limit: limit - used, ellipsis: true)
    }
}
