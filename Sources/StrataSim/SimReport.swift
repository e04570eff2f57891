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
    /// percent with two decimals, followed by a one-line legend.
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
        let header = ["trace", "requests", "size"] + policies
        var cells = [header]
        for row in rows {
            let size = Self.grouped(row.size) + (row.unit == "bytes" ? " B" : "")
            cells.append([row.trace, Self.grouped(row.requests), size]
                + policies.map { row.ratios[$0].map { String(format: "%.2f", $0 * 100) } ?? "-" })
        }
        let widths = header.indices.map { column in cells.map { $0[column].count }.max() ?? 0 }
        var lines = cells.map { line in
            line.indices.map { column -> String in
                let padding = String(repeating: " ", count: widths[column] - line[column].count)
                return column == 0 ? line[column] + padding : padding + line[column]
            }.joined(separator: "  ")
        }
        let sized = rows.contains { $0.unit == "bytes" }
        lines.append("hit ratios in %; size = capacity in objects" + (sized ? " (B: in bytes, for traces with sizes)" : ""))
        return lines.joined(separator: "\n")
    }

    struct Row: Encodable {
        var trace: String
        var requests: Int
        var size: Int
        var unit: String
        var policy: String
        var hits: Int
        var hitRatio: Double
    }

    /// A JSON array with one object per result: `trace`, `requests`, `size`,
    /// `unit` (`objects` or `bytes`), `policy`, `hits`, `hitRatio` (0–1).
    public func json() -> String {
        let rows = results.map {
            Row(trace: $0.trace, requests: $0.requests, size: $0.size, unit: $0.unit, policy: $0.policy,
                hits: $0.hits, hitRatio: ($0.hitRatio * 1_000_000).rounded() / 1_000_000)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(rows) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }

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
