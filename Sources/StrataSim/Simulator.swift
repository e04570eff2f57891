/// Replays traces against every policy at every size, one after the other on
/// the calling thread (so LRU order, and therefore every number, is exact and
/// repeatable).
public struct Simulator: Sendable {
    /// The policies, in report order.
    public var policies: [PolicyKind]
    /// The capacities, in report order (objects, or bytes for sized traces).
    public var sizes: [Int]
    /// Salts the memory level's key hashes (``SimKey``): a run repeats
    /// exactly for a given seed, in any process.
    public var seed: UInt64
    /// Requests between two progress reports.
    public var progressInterval = 1 << 14

    /// A simulator of `policies` × `sizes`, hashing keys with `seed`.
    public init(policies: [PolicyKind], sizes: [Int], seed: UInt64 = 0) {
        self.policies = policies
        self.sizes = sizes
        self.seed = seed
    }

    /// Requests replayed in all for `trace`: its length × policies × sizes.
    public func work(for trace: Trace) -> Int {
        trace.count * policies.count * sizes.count
    }

    /// Replays `trace` for each size and policy. `progress` receives the
    /// requests replayed so far for this trace (up to ``work(for:)``) and the
    /// run in progress ("lru @ 1000").
    public func run(_ trace: Trace, progress: (_ done: Int, _ current: String) -> Void = { _, _ in }) -> [SimulationResult] {
        let future = PolicyKind.FutureCache()
        var results: [SimulationResult] = []
        var done = 0
        for size in sizes {
            for kind in policies {
                let policy = kind.make(PolicyKind.Context(trace: trace, capacity: size, seed: seed, future: future))
                let label = "\(kind.name) @ \(size)"
                progress(done, label)
                let hits = replay(trace, on: policy) { progress(done + $0, label) }
                done += trace.count
                results.append(SimulationResult(
                    trace: trace.name, requests: trace.count, size: size,
                    unit: trace.isSized ? "bytes" : "objects", policy: kind.name, hits: hits))
            }
        }
        progress(done, "")
        return results
    }

    /// Feeds every request to `policy`; returns the hits.
    func replay(_ trace: Trace, on policy: any Policy, progress: (Int) -> Void) -> Int {
        var hits = 0
        let keys = trace.keys
        let interval = max(1, progressInterval)
        if let sizes = trace.sizes {
            for i in keys.indices {
                if policy.access(key: keys[i], size: sizes[i]) { hits += 1 }
                if (i + 1) % interval == 0 { progress(i + 1) }
            }
        } else {
            for i in keys.indices {
                if policy.access(key: keys[i], size: 1) { hits += 1 }
                if (i + 1) % interval == 0 { progress(i + 1) }
            }
        }
        return hits
    }
}
