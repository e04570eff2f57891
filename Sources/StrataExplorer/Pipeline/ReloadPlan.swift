import Strata

/// What `:reload` changes in the running pipeline: the settings a memory
/// level can take live (capacity, count, ttl, policy), level by level. Any
/// other difference between the file and the running pipeline (a level
/// added, removed, renamed or of another kind, another path, origin, URL,
/// wrapper, fail-safe, refresh-ahead or name) is refused, naming the file and line: it
/// needs a restart, and the running pipeline is kept as it is.
struct ReloadPlan {
    /// The levels to change (by index in the pipeline) and their settings from the file.
    let changes: [(index: Int, spec: LevelSpec)]

    /// Why a file cannot be applied live.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    init(running: PipelineSpec, file: PipelineSpec, path: String) throws(Refusal) {
        func refuse(_ line: Int?, _ what: String) -> Refusal {
            Refusal(description: "\(path)\(line.map { ":\($0)" } ?? ""): \(what); only a memory level's capacity, count, "
                    + "ttl and policy change live (restart strata for the rest); the running pipeline is kept")
        }
        guard file.levels.count == running.levels.count else {
            throw refuse(nil, "the file has \(file.levels.count) levels, the running pipeline \(running.levels.count)")
        }
        if file.name != running.name { throw refuse(nil, "the pipeline's name changed") }
        if file.failSafe != running.failSafe { throw refuse(nil, "fail-safe changed") }
        if file.refreshAhead != running.refreshAhead { throw refuse(nil, "refresh-ahead changed") }
        var changes: [(Int, LevelSpec)] = []
        for (index, (now, wanted)) in zip(running.levels, file.levels).enumerated() {
            guard wanted.name == now.name else {
                throw refuse(wanted.line, "level \(index + 1) is \(wanted.name) in the file, \(now.name) running")
            }
            guard wanted.kind.label == now.kind.label else {
                throw refuse(wanted.line, "level \(now.name) is a \(wanted.kind.label) level in the file, \(now.kind.label) running")
            }
            // The same but for what changes live: then only that differs.
            var rest = wanted
            rest.line = now.line
            if case .memory = wanted.kind {
                rest.kind = now.kind
                rest.ttl = now.ttl
                rest.policy = now.policy
            }
            guard rest == now else { throw refuse(wanted.line, "level \(now.name): \(Self.changed(now, rest))") }
            if Self.live(wanted) != Self.live(now) { changes.append((index, wanted)) }
        }
        self.changes = changes
    }

    /// What a live edit sets, compared (the policy as it applies: nil is the default).
    static func live(_ spec: LevelSpec) -> [String] {
        ["\(spec.kind)", spec.ttl.map { "\($0)" } ?? "-", "\((spec.policy ?? spec.kind.defaultPolicy).map(\.rawValue) ?? "-")"]
    }

    /// The first setting that differs between `now` and `wanted`, besides the live ones.
    static func changed(_ now: LevelSpec, _ wanted: LevelSpec) -> String {
        if wanted.kind != now.kind { return "its \(now.kind.label) settings changed (\(wanted.details))" }
        if wanted.ttl != now.ttl { return "ttl changed" }
        if wanted.policy != now.policy { return "policy changed" }
        if wanted.sliding != now.sliding { return "sliding changed" }
        if wanted.pooled != now.pooled { return "pooled changed" }
        if wanted.capRequests != now.capRequests { return "cap-requests changed" }
        if wanted.condition != now.condition { return "condition changed" }
        return "its settings changed"
    }
}
