import Strata

/// Draws a ``ViewState`` into a ``CellBuffer``: pure, so frames are testable as text.
///
/// Layout, top to bottom: a title bar, one pane per level (5 rows each) in
/// pipeline order, the event log (newest first), the status or command line,
/// and the key-hint footer. Levels that do not fit are summarised on one line
/// above the log; nothing is ever drawn over anything else.
public struct Renderer: Sendable {
    public var glyphs: BoxGlyphs
    public var unicode: Bool

    public static let paneHeight = 5
    public static let minimumWidth = 40
    public static let minimumHeight = 8

    public init(unicode: Bool) {
        self.unicode = unicode
        glyphs = unicode ? .unicode : .ascii
    }

    public func render(_ state: ViewState, width: Int, height: Int) -> CellBuffer {
        var buffer = CellBuffer(width: width, height: height)
        guard width >= Self.minimumWidth, height >= Self.minimumHeight else {
            let message = "terminal too small (\(width)x\(height)); strata needs \(Self.minimumWidth)x\(Self.minimumHeight)"
            buffer.put(message, x: 0, y: 0, role: .error)
            return buffer
        }
        drawTitle(state, into: &buffer)
        let middleTop = 1, middleBottom = height - 2  // exclusive
        let available = middleBottom - middleTop
        let minimumLog = 4
        var shown = state.panes.count
        var summaryRows = 0
        if shown * Self.paneHeight + minimumLog > available {
            summaryRows = 1
            shown = max(0, (available - minimumLog - summaryRows) / Self.paneHeight)
        }
        var y = middleTop
        for pane in state.panes.prefix(shown) {
            drawPane(pane, y: y, into: &buffer)
            y += Self.paneHeight
        }
        if summaryRows > 0 {
            drawSummary(Array(state.panes.dropFirst(shown)), y: y, into: &buffer)
            y += 1
        }
        drawEvents(state.events, y: y, height: middleBottom - y, into: &buffer)
        drawStatus(state, y: height - 2, into: &buffer)
        drawFooter(y: height - 1, into: &buffer)
        if state.showHelp { drawHelp(into: &buffer) }
        return buffer
    }

    // MARK: Parts

    func drawTitle(_ state: ViewState, into buffer: inout CellBuffer) {
        buffer.fill(" ", x: 0, y: 0, count: buffer.width, role: .title)
        var left = " strata · \(state.title)"
        if state.paused { left += "  ‖ PAUSED" }
        if let workload = state.workload { left += "  ▶ \(workload)" }
        if !unicode { left = left.replacingOccurrences(of: "‖", with: "||").replacingOccurrences(of: "▶", with: ">") }
        let right = "\(state.hz) Hz · \(state.theme) "
        let rightWidth = TextWidth.of(right)
        buffer.put(left, x: 0, y: 0, role: .title, limit: max(0, buffer.width - rightWidth - 1))
        buffer.put(right, x: buffer.width - rightWidth, y: 0, role: .title)
    }

    func drawPane(_ pane: PaneState, y: Int, into buffer: inout CellBuffer) {
        // "origin · origin · pooled" reads badly: skip the kind when it is the name.
        let summary = pane.summary.hasPrefix(pane.name + " · ") ? String(pane.summary.dropFirst(pane.name.count + 3))
            : (pane.summary == pane.name ? "" : pane.summary)
        var title: [(String, Role)] = [(pane.name, .label)]
        if !summary.isEmpty { title.append((" · " + summary, .dim)) }
        if let on = pane.conditionOn {
            title.append((on ? " [on]" : " [OFF]", on ? .toggleOn : .toggleOff))
        }
        if pane.lastError != nil && pane.stats.errors + pane.stats.setErrors + pane.stats.backfillFailures > 0 {
            title.append((unicode ? " ⚠" : " !", .error))
        }
        buffer.box(x: 0, y: y, width: buffer.width, height: Self.paneHeight, title: title, glyphs: glyphs)
        let inner = buffer.width - 4
        let s = pane.stats
        var line = Line(buffer: buffer, x: 2, y: y + 1, limit: inner)
        line.pair("gets", Units.count(Double(s.gets)), .value)
        line.pair("hits", Units.count(Double(s.hits)), .hit)
        line.pair("misses", Units.count(Double(s.misses)), .miss)
        line.pair("hit", s.requests == 0 ? "-" : String(format: "%.1f%%", s.hitRatio * 100), ratioRole(s))
        let spark = sparkline(pane.sparkline, width: min(30, max(0, inner - line.used - 2)))
        buffer = line.buffer
        if !spark.isEmpty { buffer.put(spark, x: 2 + inner - TextWidth.of(spark), y: y + 1, role: .sparkline) }

        line = Line(buffer: buffer, x: 2, y: y + 2, limit: inner)
        line.pair("sets", Units.count(Double(s.sets)), .value)
        line.pair("rm", Units.count(Double(s.removes)), .value)
        line.pair("errors", Units.count(Double(s.errors + s.setErrors)), s.errors + s.setErrors > 0 ? .error : .value)
        line.pair("back-fills", Units.count(Double(s.backfills)), .value)
        if s.backfillFailures > 0 { line.pair("failed", Units.count(Double(s.backfillFailures)), .error) }
        line.pair("p50", Units.latency(s.getP50), .value)
        line.pair("p99", Units.latency(s.getP99), .value)
        buffer = line.buffer

        line = Line(buffer: buffer, x: 2, y: y + 3, limit: inner)
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
        buffer.put(" +\(panes.count) more (enlarge the terminal): " + parts.joined(separator: " · "), x: 0, y: y, role: .dim)
    }

    func drawEvents(_ events: [EventLine], y: Int, height: Int, into buffer: inout CellBuffer) {
        guard height >= 2 else { return }
        buffer.box(x: 0, y: y, width: buffer.width, height: height,
                   title: [("events", .label), (" newest first", .dim)], glyphs: glyphs)
        for (row, event) in events.prefix(max(0, height - 2)).enumerated() {
            let used = buffer.put(event.time + " ", x: 2, y: y + 1 + row, role: .dim, limit: buffer.width - 4)
            buffer.put(event.text, x: 2 + used, y: y + 1 + row, role: event.isError ? .error : .normal,
                       limit: max(0, buffer.width - 4 - used))
        }
    }

    func drawStatus(_ state: ViewState, y: Int, into buffer: inout CellBuffer) {
        if let command = state.commandLine {
            buffer.fill(" ", x: 0, y: y, count: buffer.width, role: .command)
            let cursor = unicode ? "█" : "_"
            var text = ":" + command + cursor
            let width = buffer.width - 1
            while TextWidth.of(text) > width { text.removeFirst() }  // show the end being typed
            buffer.put(text, x: 0, y: y, role: .command)
            return
        }
        let role: Role = state.status.isError ? .statusError : .status
        buffer.fill(" ", x: 0, y: y, count: buffer.width, role: role)
        buffer.put(" " + state.status.message, x: 0, y: y, role: role)
    }

    func drawFooter(y: Int, into buffer: inout CellBuffer) {
        buffer.fill(" ", x: 0, y: y, count: buffer.width - 1, role: .footer)
        var x = 1
        for (key, label) in KeyHelp.footer {
            let needed = TextWidth.of(key) + TextWidth.of(label) + 3
            if x + needed > buffer.width - 1 { break }  // never the bottom-right cell
            x += buffer.put(key, x: x, y: y, role: .footerKey)
            x += buffer.put(" " + label + "  ", x: x, y: y, role: .footer)
        }
    }

    func drawHelp(into buffer: inout CellBuffer) {
        var lines: [(String, String)] = KeyHelp.keys.map { ($0.key, $0.meaning) }
        lines.append(("", ""))
        lines.append(contentsOf: Command.reference.map { (":" + $0.syntax, $0.meaning) })
        let width = min(buffer.width - 2, 92)
        let height = min(buffer.height - 2, lines.count + 2)
        let x = (buffer.width - width) / 2, y = (buffer.height - height) / 2
        for row in y..<(y + height) { buffer.fill(" ", x: x, y: row, count: width, role: .helpText) }
        buffer.box(x: x, y: y, width: width, height: height, title: [("help", .helpKey), (" Esc closes", .helpText)],
                   glyphs: glyphs, role: .helpText)
        let keyWidth = min(32, lines.map { TextWidth.of($0.0) }.max() ?? 0)
        for (row, (key, meaning)) in lines.prefix(height - 2).enumerated() {
            buffer.put(key, x: x + 2, y: y + 1 + row, role: .helpKey, limit: keyWidth)
            buffer.put(meaning, x: x + 3 + keyWidth, y: y + 1 + row, role: .helpText, limit: max(0, width - keyWidth - 5))
        }
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
        used += buffer.put(text, x: x + used, y: y, role: role, limit: limit - used)
    }
}
