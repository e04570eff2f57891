/// `strata sim --curve`: hit ratio against capacity, and the capacity to
/// recommend.
///
/// The recommendation is the smallest capacity tried whose hit ratio is
/// within `within` points (1 by default) of the best ratio tried: past it,
/// doubling the memory buys less than that. By default the capacities double
/// up to the trace's working set (every distinct object fits, so the best
/// ratio tried is the most any cache can reach: only first requests miss),
/// so the recommendation answers "how much of the working set is worth
/// keeping". A rule on the ratio itself, not on the curve's slope, so one
/// noisy step cannot move it, and the same for every policy.
public enum CapacityCurve {
    /// The recommended capacity for one trace and policy.
    public struct Recommendation: Sendable, Equatable {
        public var trace: String
        public var policy: String
        /// The smallest capacity tried within `within` points of the best ratio.
        public var size: Int
        /// Its hit ratio (0–1).
        public var hitRatio: Double
        /// The capacity with the best ratio (the smallest, on a tie).
        public var bestSize: Int
        /// The best ratio tried (0–1).
        public var bestHitRatio: Double
    }

    /// How many capacities ``doublingSizes(for:)`` gives at most.
    public static let defaultPoints = 12

    /// Capacities for `trace`: powers of two, ascending, up to the first that
    /// holds its working set (distinct keys, or for a sized trace the sum of
    /// each distinct object's largest size), at most `points` of them.
    public static func doublingSizes(for trace: Trace, points: Int = defaultPoints) -> [Int] {
        let top = powerOfTwo(atLeast: workingSet(of: trace))
        var sizes: [Int] = []
        var size = top
        while size >= 1 && sizes.count < max(points, 1) {
            sizes.append(size)
            size /= 2
        }
        return sizes.reversed()
    }

    /// Objects (or bytes, for a sized trace) that hold every distinct object at once.
    public static func workingSet(of trace: Trace) -> Int {
        guard let sizes = trace.sizes else { return trace.distinctKeys }
        var largest: [Int: Int] = [:]
        for (key, size) in zip(trace.keys, sizes) { largest[key] = max(largest[key] ?? 0, size) }
        return min(largest.values.reduce(0, +), Trace.maxSize)
    }

    static func powerOfTwo(atLeast value: Int) -> Int {
        var power = 1
        while power < value && power < Trace.maxSize { power *= 2 }
        return power
    }

    /// One recommendation per trace and policy other than `optimal`, in
    /// first-appearance order, over the sizes each was run at.
    public static func recommend(_ results: [SimulationResult], within points: Double) -> [Recommendation] {
        var order: [String] = []
        var runs: [String: [SimulationResult]] = [:]
        for result in results where result.policy != PolicyAdvice.optimalName {
            let key = result.trace + "\u{0}" + result.policy
            if runs[key] == nil { order.append(key) }
            runs[key, default: []].append(result)
        }
        return order.compactMap { key in
            let curve = runs[key]!.sorted { $0.size < $1.size }
            // One trace: every run has the same requests, so hits order ratios.
            guard let best = curve.max(by: { $0.hits != $1.hits ? $0.hits < $1.hits : $0.size > $1.size }),
                  let chosen = curve.first(where: { 100 * $0.hitRatio >= 100 * best.hitRatio - points }) else { return nil }
            return Recommendation(trace: chosen.trace, policy: chosen.policy, size: chosen.size, hitRatio: chosen.hitRatio,
                                  bestSize: best.size, bestHitRatio: best.hitRatio)
        }
    }
}
