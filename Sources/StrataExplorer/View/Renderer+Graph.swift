/// A labelled graph (btop-style blocks with an axis and a time span), drawn
/// under a zoomed level where there is room.
extension Renderer {
    /// `values` (0...1, oldest first, nil for an empty second) as columns of
    /// eighth blocks, `height` rows including the box; the newest at the right.
    func drawGraph(_ title: String, values: [Double?], y: Int, height: Int, into buffer: inout CellBuffer) {
        guard height >= 4 else { return }
        buffer.box(x: 0, y: y, width: buffer.width, height: height,
                   title: [(title, .label), (" last \(values.count) s, newest right", .dim)], glyphs: glyphs)
        let rows = height - 2
        let axis = 5  // "100% "
        let columns = max(0, buffer.width - 4 - axis)
        let shown = Array(values.suffix(columns))
        let left = 2 + axis + (columns - shown.count)
        for row in 0..<rows {
            let label = row == 0 ? "100%" : row == rows - 1 ? "  0%" : row == rows / 2 ? " 50%" : ""
            buffer.put(label, x: 2, y: y + 1 + row, role: .dim)
        }
        let blocks: [Character] = unicode ? [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
            : [" ", " ", ".", ".", "-", "-", "=", "=", "#"]
        for (column, value) in shown.enumerated() {
            guard let value else { continue }
            // Eighths of the whole height this column fills.
            var eighths = Int((min(1, max(0, value)) * Double(rows * 8)).rounded())
            for row in stride(from: rows - 1, through: 0, by: -1) where eighths > 0 {
                let piece = min(8, eighths)
                buffer.put(String(blocks[piece]), x: left + column, y: y + 1 + row, role: .sparkline)
                eighths -= piece
            }
        }
    }
}
