import Foundation
import Strata

/// Live edits of the running pipeline (`set-capacity`, `set-ttl`,
/// `set-policy`, `reload`) and its files (`save`, `export`). Counters are
/// kept through every edit (they live in the wrappers around the level);
/// the pane shows the new setting and the event log says what changed and
/// what the level kept.
extension ExplorerModel {
    func performLiveEdit(_ command: Command) -> CommandOutcome {
        switch command {
        case .setCapacity(let name, let capacity):
            return edit(name, "set-capacity") { level, memory in try setCapacity(level, memory, capacity) }
        case .setTTL(let name, let ttl):
            return edit(name, "set-ttl") { level, memory in try rebuild(level, memory) { $0.ttl = ttl } }
        case .setPolicy(let name, let policy):
            return edit(name, "set-policy") { level, memory in try rebuild(level, memory) { $0.policy = policy } }
        case .reload: return reload()
        case .save(let path): return save(to: path)
        case .export(let path): return export(to: path)
        default: return CommandOutcome("")
        }
    }

    /// A one-line refusal, as the status line shows it.
    struct EditRefusal: Error {
        let message: String
    }

    /// Runs `change` on the memory level named `name`, or says in one line
    /// why the command does not apply to it; logs what `change` reports.
    private func edit(_ name: String, _ verb: String,
                      _ change: (LiveLevel, SwappableMemoryLevel) throws -> String) -> CommandOutcome {
        guard let level = pipeline.level(named: name) else {
            return CommandOutcome("\(verb): no level named '\(LiveEditParser.clipped(name))' (levels: \(levelNames))", isError: true)
        }
        guard let memory = level.memory else {
            return CommandOutcome("\(verb): \(Self.notEditable(level.spec, verb))", isError: true)
        }
        do {
            let text = try change(level, memory)
            log(text)
            return CommandOutcome(text)
        } catch {
            return CommandOutcome("\(verb): \((error as? EditRefusal)?.message ?? "\(error)")", isError: true)
        }
    }

    /// Why `verb` does not apply to a level that is not a memory level.
    static func notEditable(_ spec: LevelSpec, _ verb: String) -> String {
        let setting = ["set-capacity": "capacity", "set-ttl": "TTL", "set-policy": "eviction policy"][verb] ?? "configuration"
        switch spec.kind {
        case .memory: return "\(spec.name) cannot be edited"
        case .disk: return "\(spec.name) is a disk level: its \(setting) is fixed while it runs (edit the file, then restart strata)"
        case .redis where verb == "set-capacity":
            return "\(spec.name) is a Redis level: its memory is the server's (maxmemory), not strata's"
        case .redis where verb == "set-policy":
            return "\(spec.name) is a Redis level: the server evicts (maxmemory-policy), not strata"
        case .redis: return "\(spec.name) is a Redis level: its TTL is fixed while it runs (edit the file, then restart strata)"
        case .origin, .http:
            return "\(spec.name) is an origin (\(spec.kind.label)): it stores nothing, so has no \(setting)"
        }
    }

    /// `set-capacity`: the level resized in place (``MemoryCacheLevel/resize(capacity:countLimit:)``).
    private func setCapacity(_ level: LiveLevel, _ memory: SwappableMemoryLevel,
                             _ setting: CapacitySetting) throws(EditRefusal) -> String {
        var text = ""
        level.settings.update { spec in
            guard case .memory(let capacity, let countLimit) = spec.kind else { return }
            var (newCapacity, newCount) = (capacity, countLimit)
            let change: String
            switch setting {
            case .entries(let entries):
                newCount = entries
                change = "count limit \(countLimit.map(String.init) ?? "none") → \(entries)"
            case .bytes(let bytes):
                newCapacity = bytes
                change = "capacity \(Units.formatBytes(capacity)) → \(Units.formatBytes(bytes))"
            }
            spec.kind = .memory(capacity: newCapacity, countLimit: newCount)
            let current = memory.current
            let evicted = current.resize(capacity: newCapacity, countLimit: newCount)
            let policy = current.policy == .adaptive ? "the adaptive policy" : "least recently used"
            text = "\(spec.name): \(change) (resized in place: \(evicted) evicted by \(policy), "
                + "\(current.count) kept; counters kept)"
        }
        return text
    }

    /// `set-ttl`, `set-policy`: the level rebuilt with `change` made to its
    /// settings, its entries copied (``SwappableMemoryLevel/rebuild(as:ttl:hasDeadlines:)``).
    private func rebuild(_ level: LiveLevel, _ memory: SwappableMemoryLevel,
                         _ change: (inout LevelSpec) -> Void) throws(EditRefusal) -> String {
        var text = ""
        var refusal: EditRefusal?
        level.settings.update { spec in
            var wanted = spec
            change(&wanted)
            guard let description = Self.describeChange(from: spec, to: wanted) else {
                refusal = EditRefusal(message: "\(spec.name) already has \(Self.liveSettings(spec))")
                return
            }
            text = Self.rebuild(memory, from: spec, to: wanted, description: description)
            spec = wanted
        }
        if let refusal { throw refusal }
        return text
    }

    /// Rebuilds `memory` at `wanted`'s settings and says what it kept.
    static func rebuild(_ memory: SwappableMemoryLevel, from spec: LevelSpec, to wanted: LevelSpec, description: String) -> String {
        let oldPolicy = memory.current.policy
        let rebuilt = memory.rebuild(as: Pipeline.memoryLevel(wanted), ttl: wanted.ttl,
                                     hasDeadlines: wanted.ttl != nil || wanted.sliding != nil)
        var kept = "\(rebuilt.kept) \(rebuilt.kept == 1 ? "entry" : "entries") re-inserted "
            + (oldPolicy == .lru ? "in recency order" : "in write order")
        if rebuilt.dropped > 0 { kept += ", \(rebuilt.dropped) dropped" }
        if let ttl = wanted.ttl {
            kept += "; each expires within \(Units.format(ttl)) and no later than before"
        } else if spec.ttl != nil {
            kept += "; each keeps its deadline, new entries do not expire"
        }
        if oldPolicy == .adaptive { kept += "; request frequencies start afresh" }
        return "\(wanted.name): \(description) (rebuilt: \(kept); counters kept)"
    }

    /// `ttl 5m → 30s, policy adaptive → lru`, or nil if nothing a rebuild sets changed.
    static func describeChange(from spec: LevelSpec, to wanted: LevelSpec) -> String? {
        var parts: [String] = []
        if spec.ttl != wanted.ttl {
            parts.append("ttl \(spec.ttl.map(Units.format) ?? "none") → \(wanted.ttl.map(Units.format) ?? "none")")
        }
        let (before, after) = (spec.policy ?? spec.kind.defaultPolicy, wanted.policy ?? wanted.kind.defaultPolicy)
        if before != after { parts.append("policy \(before?.rawValue ?? "-") → \(after?.rawValue ?? "-")") }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    /// `ttl 30s, policy lru`
    static func liveSettings(_ spec: LevelSpec) -> String {
        "ttl \(spec.ttl.map(Units.format) ?? "none"), policy \((spec.policy ?? spec.kind.defaultPolicy)?.rawValue ?? "-")"
    }

    // MARK: Files

    /// `reload`: the file re-read and its live settings applied (``ReloadPlan``).
    private func reload() -> CommandOutcome {
        guard let path = pipeline.spec.file else {
            return CommandOutcome("reload: strata was started without a pipeline file (the demo pipeline): nothing to re-read",
                                  isError: true)
        }
        let plan: ReloadPlan
        do {
            let file = try PipelineFile.load(path: path)
            try Pipeline.validate(file)
            plan = try ReloadPlan(running: pipeline.currentSpec, file: file, path: path)
        } catch {
            let text = "reload: \(error)" + (error is ReloadPlan.Refusal ? "" : " (the running pipeline is kept)")
            log(text, isError: true)
            return CommandOutcome(text, isError: true)
        }
        guard !plan.changes.isEmpty else { return CommandOutcome("reload: \(path): no change to apply") }
        for (index, wanted) in plan.changes {
            let level = pipeline.levels[index]
            guard let memory = level.memory else { continue }  // the plan changes memory levels only
            level.settings.update { spec in
                if let description = Self.describeChange(from: spec, to: wanted) {
                    // One rebuild at the new settings (capacity included).
                    log("reload: " + Self.rebuild(memory, from: spec, to: wanted, description: description))
                } else if case .memory(let capacity, let countLimit) = wanted.kind {
                    let evicted = memory.current.resize(capacity: capacity, countLimit: countLimit)
                    log("reload: \(spec.name): capacity \(Units.formatBytes(capacity)), count limit "
                        + "\(countLimit.map(String.init) ?? "none") (resized in place: \(evicted) evicted; counters kept)")
                }
                let line = spec.line
                spec = wanted
                spec.line = line
            }
        }
        let count = plan.changes.count
        return CommandOutcome("reload: \(path): \(count) \(count == 1 ? "level" : "levels") changed (see the event log)")
    }

    /// `save FILE`: the pipeline as it runs now, as a pipeline file.
    private func save(to path: String) -> CommandOutcome {
        let spec = pipeline.currentSpec
        let text = PipelineWriter.yaml(spec)
        // What is saved loads back to what runs (checked, not assumed).
        guard let reread = try? PipelineFile.parse(text, file: path), reread.sameConfiguration(as: spec) else {
            return CommandOutcome("save: the pipeline does not write as a file that reads back the same (a bug: please report it)",
                                  isError: true)
        }
        do {
            try OutputFile.save(text, to: path)
        } catch {
            return CommandOutcome("save: \(error)", isError: true)
        }
        log("saved the pipeline as it runs to \(path)")
        return CommandOutcome("saved \(spec.levels.count) levels to \(path) (strata --config \(path) opens it)")
    }

    /// `export FILE.json|csv`: each level's counters and settings (``PipelineExport``).
    private func export(to path: String) -> CommandOutcome {
        guard let format = ExportFormat(path: path) else {
            return CommandOutcome("export: FILE must end in .json or .csv, got '\(LiveEditParser.clipped(path))'", isError: true)
        }
        let report = PipelineExport(pipeline: pipeline.spec.name, panes: panes(), specs: pipeline.levels.map(\.spec),
                                    resilience: pipeline.resilienceOptions, statistics: pipeline.resilienceStatistics)
        do {
            try OutputFile.save(report.text(format), to: path)
        } catch {
            return CommandOutcome("export: \(error)", isError: true)
        }
        log("exported \(pipeline.levels.count) levels' counters and settings to \(path)")
        return CommandOutcome("exported \(pipeline.levels.count) levels to \(path)")
    }
}

extension PipelineSpec {
    /// The same pipeline, wherever each was read from (file and lines aside).
    func sameConfiguration(as other: PipelineSpec) -> Bool {
        func bare(_ spec: PipelineSpec) -> PipelineSpec {
            var spec = spec
            spec.file = nil
            for index in spec.levels.indices { spec.levels[index].line = nil }
            return spec
        }
        return bare(self) == bare(other)
    }
}
