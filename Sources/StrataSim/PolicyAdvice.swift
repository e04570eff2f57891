/// Which policy did best, and how far each stayed from Bélády's, per row
/// (trace and size) and per trace: what `strata sim` prints under its table.
///
/// The best policy is the one with the most hits among those run other than
/// `optimal` (which must see the future); on a tie every tied name is given,
/// joined by `=`. Per trace, it is the one with the highest mean hit ratio
/// over the sizes. A distance to optimal is in points of hit ratio
/// (optimal's ratio minus the policy's), and is known only when `optimal` was
/// run.
public struct PolicyAdvice: Sendable, Equatable {
    /// One trace at one size.
    public struct Row: Sendable, Equatable {
        public var trace: String
        public var size: Int
        /// The best policy (tied names joined by `=`).
        public var best: String
        /// Optimal's hit ratio minus the best policy's, in points; nil without `optimal`.
        public var bestGap: Double?
    }

    /// One trace over every size it was run at.
    public struct TraceSummary: Sendable, Equatable {
        public var trace: String
        /// The policy with the highest mean hit ratio over the sizes (ties joined by `=`).
        public var best: String
        /// Each policy other than optimal, best first: its mean hit ratio
        /// (percent) and its mean distance to optimal (points; nil without
        /// `optimal`).
        public var policies: [(name: String, meanRatio: Double, meanGap: Double?)]

        public static func == (a: Self, b: Self) -> Bool {
            a.trace == b.trace && a.best == b.best && a.policies.elementsEqual(b.policies) {
                $0.name == $1.name && $0.meanRatio == $1.meanRatio && $0.meanGap == $1.meanGap
            }
        }
    }

    /// The name of Bélády's policy, the reference for every gap.
    public static let optimalName = "optimal"

    public var rows: [Row] = []
    public var traces: [TraceSummary] = []

    /// The advice for `results` (any order; rows and traces follow first appearance).
    /// Empty when no policy other than `optimal` was run.
    public init(results: [SimulationResult]) {
        var rowKeys: [RowKey] = []
        var byRow: [RowKey: [SimulationResult]] = [:]
        for result in results {
            let key = RowKey(trace: result.trace, size: result.size)
            if byRow[key] == nil { rowKeys.append(key) }
            byRow[key, default: []].append(result)
        }
        var traceOrder: [String] = []
        var perTrace: [String: [[SimulationResult]]] = [:]
        for key in rowKeys {
            let row = byRow[key]!
            let candidates = row.filter { $0.policy != Self.optimalName }
            guard let most = candidates.map(\.hits).max() else { continue }
            let optimal = row.first { $0.policy == Self.optimalName }
            let winners = candidates.filter { $0.hits == most }
            rows.append(Row(trace: key.trace, size: key.size, best: winners.map(\.policy).joined(separator: "="),
                            bestGap: optimal.map { Self.gap(winners[0], below: $0) }))
            if perTrace[key.trace] == nil { traceOrder.append(key.trace) }
            perTrace[key.trace, default: []].append(row)
        }
        traces = traceOrder.map { Self.summary(of: $0, rows: perTrace[$0]!) }
    }

    /// Points of hit ratio between `result` and `optimal` (same trace and size).
    static func gap(_ result: SimulationResult, below optimal: SimulationResult) -> Double {
        100 * Double(optimal.hits - result.hits) / Double(max(optimal.requests, 1))
    }

    struct RowKey: Hashable {
        var trace: String
        var size: Int
    }

    /// Means over the rows of one trace (each policy over the sizes it was run at).
    static func summary(of trace: String, rows: [[SimulationResult]]) -> TraceSummary {
        var names: [String] = []
        var ratios: [String: [Double]] = [:], gaps: [String: [Double]] = [:]
        var everyRowHasOptimal = true
        for row in rows {
            let optimal = row.first { $0.policy == Self.optimalName }
            if optimal == nil { everyRowHasOptimal = false }
            for result in row where result.policy != Self.optimalName {
                if ratios[result.policy] == nil { names.append(result.policy) }
                ratios[result.policy, default: []].append(100 * result.hitRatio)
                if let optimal { gaps[result.policy, default: []].append(Self.gap(result, below: optimal)) }
            }
        }
        func mean(_ values: [Double]) -> Double { values.reduce(0, +) / Double(max(values.count, 1)) }
        let policies = names.map { name in
            (name: name, meanRatio: mean(ratios[name]!), meanGap: everyRowHasOptimal ? gaps[name].map(mean) : nil)
        }
        // Stable: ties keep the column order.
        let ranked = policies.enumerated().sorted {
            $0.element.meanRatio != $1.element.meanRatio ? $0.element.meanRatio > $1.element.meanRatio : $0.offset < $1.offset
        }.map(\.element)
        let top = ranked.first?.meanRatio
        let best = ranked.filter { $0.meanRatio == top }.map(\.name).joined(separator: "=")
        return TraceSummary(trace: trace, best: best, policies: ranked)
    }
}
