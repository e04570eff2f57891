import Strata

/// Labelled graphs (btop-style blocks with an axis and a time span) and the
/// focused level's latency histogram, drawn under a zoomed level where there
/// is room.
extension Renderer {
    /// One graph's series and how its axis reads.
    struct GraphSeries {
        var title: String
        /// Oldest first; `nil` for a second without data.
        var values: [Double?]
        /// The value at the top of the axis (the bottom is 0).
        var top: Double
        /// An axis label for a value.
        var label: (Double) -> String
    }

    /// The three graphs of a zoomed pane: hit ratio, gets/s and p99 latency.
    static func graphs(for pane: PaneState) -> [GraphSeries] {
        let gets = pane.getsHistory.map { Optional($0) }
        let p99 = pane.p99History.map { $0.map { Double($0) } }
        return [
            GraphSeries(title: "hit ratio", values: pane.sparkline, top: 1) { "\(Int(($0 * 100).rounded()))%" },
            GraphSeries(title: "gets/s", values: gets, top: niceCeiling(gets.compactMap { $0 }.max() ?? 0)) {
                Units.count($0)
            },
            GraphSeries(title: "p99", values: p99, top: niceCeiling(p99.compactMap { $0 }.max() ?? 0)) {
                Units.latency(UInt64($0))
            },
        ]
    }

    /// The smallest 1, 2 or 5 times a power of ten at or above `value` (1 for 0).
    static func niceCeiling(_ value: Double) -> Double {
        guard value > 0 else { return 1 }
        var power = 1.0
        while power * 10 <= value { power *= 10 }
        while power > value { power /= 10 }
        for step in [1.0, 2, 5, 10] where power * step >= value { return power * step }
        return power * 10
    }

    /// Lays out the graphs (and, where there is room, the latency histogram)
    /// in `height` rows from `y`; returns the rows used.
    func drawZoomedGraphs(_ pane: PaneState, y: Int, height: Int, into buffer: inout CellBuffer) -> Int {
        let series = Self.graphs(for: pane)
        let minimum = 5
        guard height >= minimum else { return 0 }
        var used = 0
        if buffer.width >= 120 {
            // Side by side, one row of graphs; the histogram under them.
            let graphHeight = min(12, height)
            let width = buffer.width / series.count
            for (index, graph) in series.enumerated() {
                let x = index * width
                drawGraph(graph, x: x, y: y, width: index == series.count - 1 ? buffer.width - x : width,
                          height: graphHeight, into: &buffer)
            }
            used = graphHeight
        } else {
            // Stacked, as many as fit.
            let count = min(series.count, height / minimum)
            let graphHeight = min(12, height / count)
            for (index, graph) in series.prefix(count).enumerated() {
                drawGraph(graph, x: 0, y: y + index * graphHeight, width: buffer.width, height: graphHeight, into: &buffer)
            }
            used = graphHeight * count
        }
        if height - used >= 6 {
            let latency = pane.latency ?? LatencySnapshot(counts: [])
            used += drawHistogram(latency, y: y + used, height: min(12, height - used), into: &buffer)
        }
        return used
    }

    /// `series` as columns of eighth blocks in a `width` × `height` box
    /// (including its border); the newest value at the right.
    func drawGraph(_ series: GraphSeries, x: Int, y: Int, width: Int, height: Int, into buffer: inout CellBuffer) {
        guard height >= 4, width >= 12 else { return }
        buffer.box(x: x, y: y, width: width, height: height,
                   title: [(series.title, .label), (" last \(series.values.count) s, newest right", .dim)], glyphs: glyphs)
        let rows = height - 2
        let labels = [series.label(series.top), series.label(series.top / 2), series.label(0)]
        let axis = (labels.map(\.count).max() ?? 0) + 1
        let columns = max(0, width - 4 - axis)
        let shown = Array(series.values.suffix(columns))
        let left = x + 2 + axis + (columns - shown.count)
        for row in 0..<rows {
            let label = row == 0 ? labels[0] : row == rows - 1 ? labels[2] : row == rows / 2 ? labels[1] : ""
            buffer.put(String(repeating: " ", count: axis - 1 - label.count) + label, x: x + 2, y: y + 1 + row, role: .dim)
        }
        if !shown.contains(where: { $0 != nil }) {
            buffer.put("no data yet", x: left - (columns - shown.count) + 1, y: y + 1 + rows / 2, role: .dim)
            return
        }
        let blocks: [Character] = unicode ? [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
            : [" ", " ", ".", ".", "-", "-", "=", "=", "#"]
        for (column, value) in shown.enumerated() {
            guard let value else { continue }
            // Eighths of the whole height this column fills.
            let fraction = series.top > 0 ? min(1, max(0, value / series.top)) : 0
            var eighths = Int((fraction * Double(rows * 8)).rounded())
            for row in stride(from: rows - 1, through: 0, by: -1) where eighths > 0 {
                let piece = min(8, eighths)
                buffer.put(String(blocks[piece]), x: left + column, y: y + 1 + row, role: .sparkline)
                eighths -= piece
            }
        }
    }

    /// The focused level's get latency as horizontal bars, one per range
    /// (a power of two, merged further when there are more ranges than rows).
    /// Uses at most `height` rows (fewer when there are few ranges); returns the rows used.
    func drawHistogram(_ latency: LatencySnapshot, y: Int, height maximumHeight: Int, into buffer: inout CellBuffer) -> Int {
        guard maximumHeight >= 3 else { return 0 }
        var perGroup = 4
        var buckets = latency.buckets(perGroup: perGroup)
        while buckets.count > maximumHeight - 2 && perGroup < 1 << 12 {
            perGroup *= 2
            buckets = latency.buckets(perGroup: perGroup)
        }
        let rows = max(1, min(buckets.count, maximumHeight - 2))
        let height = rows + 2
        let total = latency.total
        buffer.box(x: 0, y: y, width: buffer.width, height: height,
                   title: [("get latency", .label), (" \(Units.count(Double(total))) timed gets since the last reset", .dim)],
                   glyphs: glyphs)
        guard total > 0 else {
            buffer.put("no timed gets yet", x: 2, y: y + 1, role: .dim)
            return height
        }
        let labels = buckets.map { "≥ " + Units.latency($0.lowerBound) }
        let labelWidth = (labels.map(\.count).max() ?? 0) + 1
        let most = buckets.map(\.count).max() ?? 1
        let barWidth = max(0, buffer.width - 4 - labelWidth - 14)
        for (row, bucket) in buckets.prefix(rows).enumerated() {
            let line = y + 1 + row
            buffer.put(labels[row], x: 2, y: line, role: .dim)
            let length = Int((Double(bucket.count) / Double(most) * Double(barWidth)).rounded(.up))
            buffer.put(String(repeating: unicode ? "█" : "#", count: length), x: 2 + labelWidth, y: line, role: .sparkline)
            let share = Double(bucket.count) / Double(total) * 100
            buffer.put(String(format: " %@ %5.1f%%", Units.count(Double(bucket.count)), share),
                       x: 2 + labelWidth + length, y: line, role: .value)
        }
        return height
    }
}
