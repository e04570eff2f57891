import Foundation
import Strata

/// The key inspector: a level's keys as a table, and a key's preview.
extension Renderer {
    /// Widths of the figure columns (size, age, ttl left, hits, freq), right-aligned.
    static let inspectorColumnWidths = [8, 7, 8, 6, 5]

    /// The table over the middle of the screen, rows `y..<(y + height)`: a
    /// title (level, counts, sort, filter), the hot keys, the header, then
    /// the rows scrolled so the selected one is in view.
    func drawInspector(_ view: InspectorView, y: Int, height: Int, into buffer: inout CellBuffer) {
        guard height >= 4 else { return }
        let arrow = view.descending ? "↓" : "↑"
        var title: [(String, Role)] = [("keys", .label), (" · \(view.level)", .value)]
        if view.loading {
            title.append((" · listing…", .dim))
        } else {
            let count = view.filter.isEmpty ? "\(view.listed)" : "\(view.rows.count) of \(view.listed)"
            title.append((" · \(count)" + (view.listed >= view.limit ? " (first \(view.limit))" : ""), .dim))
        }
        title.append((" · sort \(view.sort.title) \(arrow)", .dim))
        if !view.filter.isEmpty { title.append((" · /\(view.filter)", .value)) }
        buffer.box(x: 0, y: y, width: buffer.width, height: height, title: title, glyphs: focusedGlyphs, role: .focus)
        let inner = buffer.width - 4
        var line = Line(buffer: buffer, x: 2, y: y + 1, limit: inner)
        // A ranking over some keys only says so: "hot in a sample of 5000:".
        let hotTitle = view.hotSample.map { "hot in a sample of \($0): " } ?? "hot: "
        if view.hot.isEmpty {
            line.text(hotTitle + (view.loading ? "…" : "none known (no frequency estimate or hits)"), .dim)
        } else {
            line.text(hotTitle, .dim)
            line.text(view.hot.map { "\($0.key) (\($0.frequency ?? $0.hits ?? 0))" }.joined(separator: " · "), .hit)
        }
        buffer = line.buffer
        let keyWidth = max(4, inner - Self.inspectorColumnWidths.reduce(0) { $0 + $1 + 1 })
        let columns: [(InspectorColumn, Int)] = [(.key, keyWidth)] + zip(InspectorColumn.allCases.dropFirst(), Self.inspectorColumnWidths).map { ($0, $1) }
        var x = 2
        for (column, width) in columns {
            let text = column.title + (column == view.sort ? arrow : "")
            let aligned = column == .key ? text : String(repeating: " ", count: max(0, width - TextWidth.of(text))) + text
            buffer.put(aligned, x: x, y: y + 2, role: column == view.sort ? .label : .dim, limit: width)
            x += width + 1
        }
        let rows = max(0, height - 4)
        if let error = view.error {
            buffer.put(error, x: 2, y: y + 3, role: .error, limit: inner, ellipsis: true)
            return
        }
        if view.rows.isEmpty && !view.loading {
            let text = view.filter.isEmpty ? "no keys held" : "no key contains \"\(view.filter)\" (Esc clears the filter)"
            buffer.put(text, x: 2, y: y + 3, role: .dim, limit: inner, ellipsis: true)
            return
        }
        let selection = min(max(0, view.selection), max(0, view.rows.count - 1))
        let first = selection >= rows ? selection - rows + 1 : 0
        for (row, (index, key)) in view.rows.enumerated().dropFirst(first).prefix(rows).enumerated() {
            let rowY = y + 3 + row
            let selected = index == selection
            if selected { buffer.put("›", x: 1, y: rowY, role: .focus) }
            let cells = [key.size.map(Units.shortBytes), key.age.map(Self.shortDuration),
                         key.ttlLeft.map(Self.shortDuration) ?? "never", key.hits.map { "\($0)" }, key.frequency.map { "\($0)" }]
            buffer.put(key.key, x: 2, y: rowY, role: selected ? .label : .normal, limit: keyWidth, ellipsis: true)
            var cellX = 2 + keyWidth + 1
            for (cell, width) in zip(cells, Self.inspectorColumnWidths) {
                let text = cell ?? "-"
                buffer.put(String(repeating: " ", count: max(0, width - TextWidth.of(text))) + text, x: cellX, y: rowY,
                           role: cell == nil ? .dim : .value, limit: width)
                cellX += width + 1
            }
        }
        if first > 0 || first + rows < view.rows.count {
            let where_ = " \(selection + 1)/\(view.rows.count) "
            buffer.put(where_, x: buffer.width - 2 - TextWidth.of(where_), y: y + height - 1, role: .dim)
        }
    }

    /// A duration in at most six columns: `850ms`, `42s`, `12m`, `3h`, `2d`.
    static func shortDuration(_ duration: Duration) -> String {
        let seconds = duration.seconds
        if seconds < 1 { return String(format: "%.0fms", seconds * 1000) }
        if seconds < 120 { return String(format: "%.0fs", seconds.rounded(.down)) }
        if seconds < 7200 { return String(format: "%.0fm", (seconds / 60).rounded(.down)) }
        if seconds < 172_800 { return String(format: "%.0fh", (seconds / 3600).rounded(.down)) }
        return String(format: "%.0fd", (seconds / 86_400).rounded(.down))
    }

    /// A key's preview over the middle of the screen: size, expiry, which
    /// levels hold it, then the value as text (UTF-8) or a hex dump.
    func drawPreview(_ preview: KeyPreview, into buffer: inout CellBuffer) {
        let width = min(buffer.width - 2, 100)
        let height = buffer.height - 2
        let x = (buffer.width - width) / 2, y = 1
        for row in y..<(y + height) { buffer.fill(" ", x: x, y: row, count: width, role: .helpText) }
        buffer.box(x: x, y: y, width: width, height: height,
                   title: [("\(preview.level) · \(preview.key)", .helpKey), (" Esc closes", .helpText)], glyphs: glyphs, role: .helpText)
        let inner = width - 4
        var lines: [(String, Role)] = []
        if preview.loading {
            lines.append(("peeking…", .helpText))
        } else {
            if preview.value != nil {
                lines.append(((preview.size.map { Units.shortBytes($0) + " stored" } ?? "") + " · expires " + (preview.expiry ?? "never"), .helpText))
            } else {
                lines.append(("\(preview.level) holds no value for it now (expired, evicted or removed since listed)", .miss))
            }
            var held = "held by " + (preview.holders.isEmpty ? "no level" : preview.holders.joined(separator: ", "))
            if !preview.absent.isEmpty { held += " · not in " + preview.absent.joined(separator: ", ") }
            if !preview.uninspectable.isEmpty { held += " · not asked: " + preview.uninspectable.joined(separator: ", ") }
            lines += Self.wrapHard(held, width: inner).map { ($0, .helpText) }
            lines += preview.errors.flatMap { Self.wrapHard($0, width: inner) }.map { ($0, .error) }
            if !preview.countedAsAccess.isEmpty {
                let names = preview.countedAsAccess.joined(separator: ", ")
                lines.append(("peek counted as an access on \(names) (Redis < 7.2: no CLIENT NO-TOUCH)", .miss))
            }
            if let value = preview.value {
                lines.append(("", .helpText))
                lines += Self.valueLines(value, width: inner).map { ($0, .helpKey) }
            }
        }
        let room = max(0, height - 2)
        for (row, (text, role)) in lines.prefix(room).enumerated() {
            buffer.put(text, x: x + 2, y: y + 1 + row, role: role, limit: inner, ellipsis: true)
        }
        if lines.count > room, room > 0 {
            buffer.put("… \(lines.count - room + 1) more lines", x: x + 2, y: y + room, role: .helpText, limit: inner)
        }
    }

    /// Bytes shown at most in a preview.
    static let previewLimit = 16 * 1024

    /// `value` as lines of at most `width` columns: its text when it is UTF-8
    /// (control characters shown as `·`), else a hex dump (offset, bytes, ASCII).
    static func valueLines(_ value: Data, width: Int) -> [String] {
        let shown = value.prefix(previewLimit)
        let cut = value.count > shown.count ? ["… \(value.count - shown.count) more bytes"] : []
        if let text = String(validating: shown, as: UTF8.self) {
            return text.split(separator: "\n", omittingEmptySubsequences: false).flatMap { line in
                wrapHard(String(line.map { $0.unicodeScalars.contains { $0.properties.generalCategory == .control } ? "·" : $0 }),
                         width: width)
            } + cut
        }
        let perRow = width >= 74 ? 16 : 8
        let bytes = Array(shown)
        return stride(from: 0, to: bytes.count, by: perRow).map { start in
            let row = bytes[start..<min(bytes.count, start + perRow)]
            let hex = row.map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " ")
            let ascii = String(row.map { (0x20..<0x7f).contains($0) ? Character(Unicode.Scalar($0)) : "." })
            return String(start, radix: 16).leftPadded(to: 4) + "  " + hex.padding(toLength: perRow * 3, withPad: " ", startingAt: 0)
                + " |" + ascii + "|"
        } + ["hex: not UTF-8 text, \(value.count) bytes"] + cut
    }
}
