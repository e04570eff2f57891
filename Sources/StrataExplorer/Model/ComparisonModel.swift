import Foundation

/// The explorer's compare mode (`strata --config A --compare B`): two
/// pipelines, every command sent to both in the same order, one event log.
///
/// A workload is one key generator feeding both (each request goes to
/// both, the worker waiting for both), so the two see the same keys, in the
/// same order when it has one worker (below 100/s); a replay is
/// the same trace read by each, request by request. Commands that change
/// one level's configuration or write a file take a side: `set-capacity
/// B:L1 64`, `save A:a.yaml`. `clear` and `toggle` take one too, or act on
/// both when the level is named plainly.
public final class ComparisonModel: Sendable {
    /// A side of the comparison.
    public enum Side: String, Sendable {
        case a = "A", b = "B"
    }

    public let a: ExplorerModel
    public let b: ExplorerModel
    /// `A: a.yaml`, `B: b.yaml`: what the title, the sides and the strip call them.
    public let labelA: String
    public let labelB: String

    /// `a` and `b` should share one log (``init(a:b:fileA:fileB:)`` builds them so).
    public init(a: ExplorerModel, b: ExplorerModel, fileA: String, fileB: String) {
        self.a = a
        self.b = b
        labelA = "A: \(fileA)"
        labelB = "B: \(fileB)"
    }

    /// Both models over `pipelineA` and `pipelineB`, B's events logged into A's log.
    public convenience init(pipelineA: Pipeline, pipelineB: Pipeline, fileA: String, fileB: String) {
        let a = ExplorerModel(pipeline: pipelineA, logLabel: "A")
        self.init(a: a, b: ExplorerModel(pipeline: pipelineB, logLabel: "B", logsTo: a), fileA: fileA, fileB: fileB)
    }

    /// The title: which file is A and which is B.
    public var title: String { "\(labelA)  vs  \(labelB)" }

    /// What the screen shows of both sides now (as of `pause`, when paused);
    /// `panesA`: A's panes when the caller has them already.
    public func view(panesA: [PaneState]? = nil) -> ComparisonView {
        let panesA = panesA ?? a.panes(), panesB = b.panes()
        let comparison = PipelineComparison(.init(label: "A", model: a, panes: panesA), .init(label: "B", model: b, panes: panesB))
        return ComparisonView(labelA: labelA, labelB: labelB, panesB: panesB, rows: ComparisonView.strip(comparison))
    }

    /// Advances both models' rates and sparklines.
    public func tick() {
        a.tick()
        b.tick()
    }

    /// Runs `command` on both sides (or the side it names) and shows the
    /// outcome in the status line.
    @discardableResult
    public func execute(_ command: Command) async -> CommandOutcome {
        let outcome = await perform(command)
        a.setStatus(outcome)
        return outcome
    }

    private func perform(_ command: Command) async -> CommandOutcome {
        switch command {
        case .load(let pattern, let keys, let rate, let seconds):
            if a.pipeline.isReadOnly, let refusal = command.readOnlyRefusal { return CommandOutcome(refusal, isError: true) }
            return a.startLoad(Workload(pattern: pattern, keys: keys, rate: rate, seconds: seconds), alongside: [b])
        case .reset:
            await a.resetCounters(alongside: [b])
            return CommandOutcome("counters reset on A and B")
        case .record, .recordStop:
            // Both sides get the same requests: A's recording is B's too.
            let outcome = await a.execute(command)
            return CommandOutcome("A: " + outcome.message + (outcome.isError ? "" : " (B gets the same requests)"),
                                  isError: outcome.isError)
        case .setCapacity(let level, let capacity):
            return await onSide(of: level, "set-capacity", "A:L1 64") { .setCapacity(level: $0, capacity: capacity) }
        case .setTTL(let level, let ttl):
            return await onSide(of: level, "set-ttl", "A:L1 30s") { .setTTL(level: $0, ttl: ttl) }
        case .setPolicy(let level, let policy):
            return await onSide(of: level, "set-policy", "B:L1 lru") { .setPolicy(level: $0, policy: policy) }
        case .save(let path):
            return await onSide(of: path, "save", "B:b.yaml") { .save(path: $0) }
        case .export(let path):
            return await onSide(of: path, "export", "A:a.json") { .export(path: $0) }
        case .clear(let level?):
            if let (side, name) = Self.split(level) { return await run(.clear(level: name), on: side) }
            return await both(command)
        case .toggle(let name):
            if let (side, name) = Self.split(name) { return await run(.toggle(name: name), on: side) }
            return await both(command)
        default:
            return await both(command)
        }
    }

    /// `B:L1` → (B, `L1`); nil without a side.
    static func split(_ word: String) -> (Side, String)? {
        guard word.count > 2, let colon = word.firstIndex(of: ":"), colon == word.index(after: word.startIndex),
              let side = Side(rawValue: word.prefix(1).uppercased()) else { return nil }
        return (side, String(word[word.index(after: colon)...]))
    }

    private func model(_ side: Side) -> ExplorerModel { side == .a ? a : b }

    private func run(_ command: Command, on side: Side) async -> CommandOutcome {
        let outcome = await model(side).execute(command)
        return CommandOutcome("\(side.rawValue): \(outcome.message)", isError: outcome.isError)
    }

    /// A command that needs a side: run on the one `word` names, or refused in one line.
    private func onSide(of word: String, _ verb: String, _ example: String,
                        _ command: (String) -> Command) async -> CommandOutcome {
        guard let (side, rest) = Self.split(word) else {
            return CommandOutcome("\(verb): name the side in compare mode, e.g. \(verb) \(example)", isError: true)
        }
        return await run(command(rest), on: side)
    }

    /// Runs `command` on A, then on B; one line for both when they agree,
    /// and a found get as where each side found it (the value is in the log).
    private func both(_ command: Command) async -> CommandOutcome {
        let first = await a.execute(command)
        let second = await b.execute(command)
        if first == second { return CommandOutcome("A, B: " + first.message, isError: first.isError) }
        if case .get(let key) = command, let x = Self.found(first.message), let y = Self.found(second.message) {
            let size = x.bytes == y.bytes ? x.bytes : "A \(x.bytes), B \(y.bytes)"
            return CommandOutcome("get \(key): A from \(x.source) · B from \(y.source) (\(size))")
        }
        return CommandOutcome("A: \(first.message) · B: \(second.message)", isError: first.isError || second.isError)
    }

    /// `get k: 512 bytes from origin in 2ms: "…"` → (`512 bytes`, `origin in 2ms`).
    static func found(_ message: String) -> (bytes: Substring, source: Substring)? {
        message.firstMatch(of: #/^get \S+: (\d+ bytes) from (\S+ in \S+): /#).map { ($0.output.1, $0.output.2) }
    }

    /// Shuts both models down (see ``ExplorerModel/shutdown()``).
    public func shutdown() async {
        await a.shutdown()
        await b.shutdown()
    }
}

/// What compare mode adds to a frame: B's panes, both sides' names and the
/// comparison strip (rows of what, A, B, B − A; the first row is the header).
public struct ComparisonView: Equatable, Sendable {
    public var labelA: String
    public var labelB: String
    public var panesB: [PaneState]
    public var rows: [[String]]

    public init(labelA: String, labelB: String, panesB: [PaneState], rows: [[String]]) {
        self.labelA = labelA
        self.labelB = labelB
        self.panesB = panesB
        self.rows = rows
    }

    /// The strip's rows: a header, then ``PipelineComparison``'s differences.
    static func strip(_ comparison: PipelineComparison) -> [[String]] {
        [["figure", "A", "B", "B - A"]] + comparison.differences
    }
}
