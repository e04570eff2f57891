import Foundation

/// Renders simulation results as an aligned table, JSON or CSV.
public struct SimReport: Sendable {
    /// The results, in run order.
    public var results: [SimulationResult]

    /// A report of `results`.
    public init(results: [SimulationResult]) {
        self.results = results
    }

    /// One row per trace and size, one column per policy, hit ratios in
    /// percent with two decimals, then the row's best policy and (when
    /// `optimal` was run) its distance to optimal in points (``PolicyAdvice``);
    /// a one-line legend; and, when a trace was run at several sizes, each
    /// policy's mean ratio and mean distance to optimal per trace.
    public func table() -> String {
        var policies: [String] = []
        var rows: [(trace: String, requests: Int, size: Int, unit: String, ratios: [String: Double])] = []
        for result in results {
            if !policies.contains(result.policy) { policies.append(result.policy) }
            if let last = rows.indices.last, rows[last].trace == result.trace, rows[last].size == result.size {
                rows[last].ratios[result.policy] = result.hitRatio
            } else {
                rows.append((result.trace, result.requests, result.size, result.unit, [result.policy: result.hitRatio]))
            }
        }
        let advice = PolicyAdvice(results: results)
        var best: [String: PolicyAdvice.Row] = [:]
        for row in advice.rows { best["\(row.size) \(row.trace)"] = row }
        let withBest = !advice.rows.isEmpty && policies.count > 1
        let withGap = withBest && policies.contains(PolicyAdvice.optimalName)
        let header = ["trace", "requests", "size"] + policies + (withBest ? ["best"] : []) + (withGap ? ["gap"] : [])
        var cells = [header]
        for row in rows {
            let size = Self.grouped(row.size) + (row.unit == "bytes" ? " B" : "")
            let advised = best["\(row.size) \(row.trace)"]
            cells.append([row.trace, Self.grouped(row.requests), size]
                + policies.map { row.ratios[$0].map(Self.percent) ?? "-" }
                + (withBest ? [advised?.best ?? "-"] : [])
                + (withGap ? [advised?.bestGap.map(Self.points) ?? "-"] : []))
        }
        var lines = Self.aligned(cells, leftColumns: withBest ? [0, header.count - (withGap ? 2 : 1)] : [0])
        let sized = rows.contains { $0.unit == "bytes" }
        lines.append("hit ratios in %; size = capacity in objects" + (sized ? " (B: in bytes, for traces with sizes)" : "")
            + (withBest ? "; best: the best policy other than optimal" : "")
            + (withGap ? "; gap: optimal's ratio minus best's, in points" : ""))
        let severalSizes = Dictionary(grouping: advice.rows, by: \.trace).values.contains { $0.count > 1 }
        if withBest && severalSizes { lines += [""] + summary(advice, policies: policies, withGap: withGap) }
        return lines.joined(separator: "\n")
    }

    /// ``table()``, then the recommended capacity per trace and policy
    /// (``CapacityCurve``): the smallest tried within `within` points of the
    /// best ratio tried.
    public func curveTable(within points: Double) -> String {
        let recommendations = CapacityCurve.recommend(results, within: points)
        guard !recommendations.isEmpty else { return table() }
        let unit = { (trace: String, size: Int) -> String in
            let sized = results.contains { $0.trace == trace && $0.unit == "bytes" }
            return Self.grouped(size) + (sized ? " B" : "")
        }
        var cells = [["trace", "policy", "capacity", "hit ratio", "best tried"]]
        for r in recommendations {
            cells.append([r.trace, r.policy, unit(r.trace, r.size), Self.percent(r.hitRatio),
                          "\(Self.percent(r.bestHitRatio)) @ \(unit(r.trace, r.bestSize))"])
        }
        let within = points == points.rounded() ? String(Int(points)) : String(points)
        return ([table(), "", "recommended capacity: the smallest tried within \(within) point\(points == 1 ? "" : "s") of the best ratio tried"]
            + Self.aligned(cells, leftColumns: [0, 1])).joined(separator: "\n")
    }

    /// Per trace: the best policy, and each policy's mean ratio (and mean
    /// distance to optimal) over the sizes.
    func summary(_ advice: PolicyAdvice, policies: [String], withGap: Bool) -> [String] {
        let columns = policies.filter { $0 != PolicyAdvice.optimalName }
        var cells = [["trace", "best"] + columns]
        for trace in advice.traces {
            cells.append([trace.trace, trace.best] + columns.map { name in
                guard let policy = trace.policies.first(where: { $0.name == name }) else { return "-" }
                return Self.percent(policy.meanRatio / 100) + (policy.meanGap.map { " (\(Self.points($0)))" } ?? "")
            })
        }
        return ["per trace, mean over its sizes: hit ratio in %" + (withGap ? " (points below optimal)" : "")]
            + Self.aligned(cells, leftColumns: [0, 1])
    }

    /// `cells` as lines of columns two spaces apart: text columns
    /// (`leftColumns`) padded on the right, numbers on the left.
    static func aligned(_ cells: [[String]], leftColumns: Set<Int>) -> [String] {
        let widths = cells[0].indices.map { column in cells.map { $0[column].count }.max() ?? 0 }
        return cells.map { line in
            var text = line.indices.map { column -> String in
                let padding = String(repeating: " ", count: widths[column] - line[column].count)
                return leftColumns.contains(column) ? line[column] + padding : padding + line[column]
            }.joined(separator: "  ")
            while text.last == " " { text.removeLast() }
            return text
        }
    }

    /// A ratio (0–1) in percent with two decimals.
    static func percent(_ ratio: Double) -> String { String(format: "%.2f", ratio * 100) }

    /// Points with two decimals.
    static func points(_ value: Double) -> String { String(format: "%.2f", value) }

    struct Row: Encodable {
        var trace: String
        var requests: Int
        var size: Int
        var unit: String
        var policy: String
        var hits: Int
        var hitRatio: Double
        /// Optimal's ratio minus this one's, in points (only when `optimal` ran at this size).
        var gapToOptimal: Double?
        /// Whether this is the recommended capacity (only with `--curve`).
        var recommended: Bool?
    }

    /// A JSON array with one object per result: `trace`, `requests`, `size`,
    /// `unit` (`objects` or `bytes`), `policy`, `hits`, `hitRatio` (0–1), and
    /// `gapToOptimal` (points) when `optimal` ran at that size; with
    /// `curveWithin`, `recommended` (true for the recommended capacity of each
    /// trace and policy, see ``CapacityCurve``).
    public func json(curveWithin: Double? = nil) -> String {
        var optimal: [String: Double] = [:]
        for r in results where r.policy == PolicyAdvice.optimalName { optimal["\(r.size) \(r.trace)"] = r.hitRatio }
        let chosen = Set(curveWithin.map { CapacityCurve.recommend(results, within: $0) }?.map { "\($0.size) \($0.policy) \($0.trace)" } ?? [])
        let rows = results.map { r in
            Row(trace: r.trace, requests: r.requests, size: r.size, unit: r.unit, policy: r.policy,
                hits: r.hits, hitRatio: Self.rounded(r.hitRatio),
                gapToOptimal: optimal["\(r.size) \(r.trace)"].map { Self.rounded(100 * ($0 - r.hitRatio)) },
                recommended: curveWithin == nil || r.policy == PolicyAdvice.optimalName
                    ? nil : chosen.contains("\(r.size) \(r.policy) \(r.trace)"))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(rows) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Six decimals.
    static func rounded(_ value: Double) -> Double { (value * 1_000_000).rounded() / 1_000_000 }

    /// CSV with a header: `trace,requests,size,unit,policy,hits,hit_ratio`
    /// (hit ratio from 0 to 1, six decimals).
    public func csv() -> String {
        var lines = ["trace,requests,size,unit,policy,hits,hit_ratio"]
        for r in results {
            lines.append([Self.csvField(r.trace), "\(r.requests)", "\(r.size)", r.unit, Self.csvField(r.policy),
                          "\(r.hits)", String(format: "%.6f", r.hitRatio)].joined(separator: ","))
        }
        return lines.joined(separator: "\n")
    }

    /// `1234567` → `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (i, digit) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return (value < 0 ? "-" : "") + out
    }

    /// Quotes a field holding a comma, quote or newline (RFC 4180).
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
