import Foundation
import Strata

/// `strata run --config A --compare B`: the figures of two pipelines after
/// the same commands (or trace), side by side, then how B differs from A.
/// The explorer's compare mode (`strata --config A --compare B`) draws the
/// same differences live (``differences``).
public struct PipelineComparison: Sendable {
    /// One pipeline's figures once its run has ended.
    public struct Side: Sendable {
        /// `A: a.yaml` and the like.
        public let label: String
        public let panes: [PaneState]
        /// The p99 of the gets through the whole pipeline (nil: no get yet).
        public let p99: UInt64?

        /// The figures of `model` now (`panes`: those on its screen, which
        /// `pause` freezes), with the p99 of every get it made.
        public init(label: String, model: ExplorerModel, panes: [PaneState]? = nil) {
            self.label = label
            self.panes = panes ?? model.currentPanes()
            p99 = model.getLatency.snapshot().percentile(0.99)
        }

        /// Figures given as they are (the renderer's tests).
        init(label: String, panes: [PaneState], p99: UInt64?) {
            self.label = label
            self.panes = panes
            self.p99 = p99
        }

        /// Gets that reached the first level, and the last (the origin).
        var firstGets: Int { panes.first?.stats.gets ?? 0 }
        var lastGets: Int { panes.last?.stats.gets ?? 0 }

        /// The share of gets answered above the last level (nil before any get).
        var answeredAbove: Double? {
            firstGets == 0 || panes.count < 2 ? nil : 1 - Double(lastGets) / Double(firstGets)
        }

        /// The side's table: one row per level.
        var rows: [[String]] {
            [[label, "gets", "hits", "hit%", "p99"]] + panes.map { pane in
                let s = pane.stats
                return [pane.name, "\(s.gets)", "\(s.hits)", s.requests == 0 ? "-" : String(format: "%.1f", s.hitRatio * 100),
                        Units.latency(s.getP99)]
            }
        }
    }

    public let a: Side
    public let b: Side

    public init(_ a: Side, _ b: Side) {
        self.a = a
        self.b = b
    }

    /// Both tables side by side, then the differences.
    public var text: String {
        let left = ScriptRunner.aligned(a.rows), right = ScriptRunner.aligned(b.rows)
        let width = left.map(TextWidth.of).max() ?? 0
        var lines = (0..<max(left.count, right.count)).map { row -> String in
            let l = row < left.count ? left[row] : ""
            let r = row < right.count ? right[row] : ""
            return (l + String(repeating: " ", count: width - TextWidth.of(l)) + "   │   " + r).trimmingCharacters(in: .whitespaces)
        }
        lines.append("")
        lines += ScriptRunner.aligned([["difference", a.label, b.label, "B - A"]] + differences)
        return lines.joined(separator: "\n")
    }

    /// Rows of (what, A, B, B − A): the first level's hit ratio, the share
    /// served from cache (above the last level), the requests that reached
    /// the last level (the origin) and the p99 of a get.
    var differences: [[String]] {
        func percent(_ value: Double?) -> String { value.map { String(format: "%.1f%%", $0 * 100) } ?? "-" }
        func points(_ x: Double?, _ y: Double?) -> String {
            x.flatMap { x in y.map { String(format: "%+.1f points", ($0 - x) * 100) } } ?? "-"
        }
        var rows: [[String]] = []
        let hitA = a.panes.first.flatMap { $0.stats.requests == 0 ? nil : $0.stats.hitRatio }
        let hitB = b.panes.first.flatMap { $0.stats.requests == 0 ? nil : $0.stats.hitRatio }
        rows.append(["hit ratio of \(a.panes.first?.name ?? "-") / \(b.panes.first?.name ?? "-")", percent(hitA), percent(hitB),
                     points(hitA, hitB)])
        rows.append(["served from cache", percent(a.answeredAbove), percent(b.answeredAbove), points(a.answeredAbove, b.answeredAbove)])
        let change = b.lastGets - a.lastGets
        let relative = a.lastGets == 0 ? "" : String(format: " (%+.1f%%)", Double(change) / Double(a.lastGets) * 100)
        rows.append(["requests to \(a.panes.last?.name ?? "-") / \(b.panes.last?.name ?? "-")", "\(a.lastGets)", "\(b.lastGets)",
                     (change > 0 ? "+" : "") + "\(change)" + relative])
        let p99 = a.p99.flatMap { x in b.p99.map { y in (y >= x ? "+" : "-") + Units.latency(y >= x ? y - x : x - y) } } ?? "-"
        rows.append(["p99 of a get", a.p99.map(Units.latency) ?? "-", b.p99.map(Units.latency) ?? "-", p99])
        return rows
    }
}
