import Foundation
import Strata

/// Runs explorer commands without a terminal (`strata run`): each line of a
/// script (or stdin) is one command; `#` starts a comment. Prints each
/// outcome, then per-level statistics as a table or JSON.
public struct ScriptRunner {
    public let model: ExplorerModel
    public var write: (String) -> Void
    public var writeError: (String) -> Void

    public init(model: ExplorerModel, write: @escaping (String) -> Void, writeError: @escaping (String) -> Void) {
        self.model = model
        self.write = write
        self.writeError = writeError
    }

    /// Runs every line; returns the number of lines that failed.
    public func run(lines: [String], source: String) async -> Int {
        var failures = 0
        for (index, raw) in lines.enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            let command: Command
            do {
                command = try CommandParser.parse(line)
            } catch {
                writeError("\(source):\(index + 1): \(error.message)")
                failures += 1
                continue
            }
            switch command {
            case .quit: return failures
            case .theme, .hz, .help:
                write("> \(line)\n  (no effect without a screen)")
                continue
            default: break
            }
            let outcome = await model.execute(command)
            if case .load(_, _, _, .some) = command, let workload = model.workload {
                await workload.finished()
                write("> \(line)\n  \(workload.completed) gets in \(String(format: "%.1f", workload.elapsedSeconds))s")
            } else {
                write("> \(line)\n  \(outcome.message)")
            }
            if outcome.isError {
                writeError("\(source):\(index + 1): \(outcome.message)")
                failures += 1
            }
        }
        if let workload = model.workload {
            workload.stop()
            await workload.finished()
        }
        await model.pipeline.cache.waitForPendingWrites()
        return failures
    }

    /// Per-level statistics as an aligned table.
    public func statisticsTable() -> String {
        let header = ["level", "kind", "gets", "hits", "misses", "hit%", "sets", "rm", "errors", "back-fills", "entries", "bytes", "p50", "p99"]
        var rows = [header]
        for pane in model.currentPanes() {
            let s = pane.stats
            rows.append([
                pane.name, pane.summary, "\(s.gets)", "\(s.hits)", "\(s.misses)",
                s.requests == 0 ? "-" : String(format: "%.1f", s.hitRatio * 100), "\(s.sets)", "\(s.removes)",
                "\(s.errors + s.setErrors)", "\(s.backfills)", pane.entries.map(String.init) ?? "-",
                pane.bytes.map(String.init) ?? "-", Units.latency(s.getP50), Units.latency(s.getP99),
            ])
        }
        let widths = header.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n")
    }

    /// Per-level statistics as JSON (see ``ScriptReport``).
    public func statisticsJSON() -> String {
        let report = ScriptReport(pipeline: model.pipeline.spec.name, levels: model.currentPanes().map(ScriptReport.Level.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(report) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The JSON `strata run --json` prints: one object per level, every figure
/// named with its unit (`getP99Nanoseconds`, `bytes`, `capacityBytes`,
/// `hitRatio` from 0 to 1); counts are plain numbers; `null` when a level does
/// not know a figure (an origin has no entries).
struct ScriptReport: Encodable {
    struct Level: Encodable {
        var level: String
        var kind: String
        var gets: Int
        var hits: Int
        var misses: Int
        var errors: Int
        var hitRatio: Double?
        var sets: Int
        var setErrors: Int
        var removes: Int
        var removeErrors: Int
        var clears: Int
        var memoryWarnings: Int
        var backfills: Int
        var backfillFailures: Int
        var getP50Nanoseconds: UInt64?
        var getP99Nanoseconds: UInt64?
        var entries: Int?
        var countLimit: Int?
        var bytes: Int?
        var capacityBytes: Int?
        /// The level's own counters (a memory level's `evictions`, a Redis
        /// level's `invalidations`), by name; all are counts.
        var levelCounters: [String: Int]?
        var lastError: String?

        init(_ pane: PaneState) {
            let s = pane.stats
            level = pane.name
            kind = pane.summary
            gets = s.gets
            hits = s.hits
            misses = s.misses
            errors = s.errors
            hitRatio = s.requests == 0 ? nil : (s.hitRatio * 1_000_000).rounded() / 1_000_000
            sets = s.sets
            setErrors = s.setErrors
            removes = s.removes
            removeErrors = s.removeErrors
            clears = s.clears
            memoryWarnings = s.memoryWarnings
            backfills = s.backfills
            backfillFailures = s.backfillFailures
            getP50Nanoseconds = s.getP50
            getP99Nanoseconds = s.getP99
            entries = pane.entries
            countLimit = pane.countLimit
            bytes = pane.bytes
            capacityBytes = pane.capacity
            levelCounters = s.levelCounters
            lastError = pane.lastError
        }

        /// Absent figures are written as `null`, so every level has every key.
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(level, forKey: .level)
            try c.encode(kind, forKey: .kind)
            try c.encode(gets, forKey: .gets)
            try c.encode(hits, forKey: .hits)
            try c.encode(misses, forKey: .misses)
            try c.encode(errors, forKey: .errors)
            try c.encode(hitRatio, forKey: .hitRatio)
            try c.encode(sets, forKey: .sets)
            try c.encode(setErrors, forKey: .setErrors)
            try c.encode(removes, forKey: .removes)
            try c.encode(removeErrors, forKey: .removeErrors)
            try c.encode(clears, forKey: .clears)
            try c.encode(memoryWarnings, forKey: .memoryWarnings)
            try c.encode(backfills, forKey: .backfills)
            try c.encode(backfillFailures, forKey: .backfillFailures)
            try c.encode(getP50Nanoseconds, forKey: .getP50Nanoseconds)
            try c.encode(getP99Nanoseconds, forKey: .getP99Nanoseconds)
            try c.encode(entries, forKey: .entries)
            try c.encode(countLimit, forKey: .countLimit)
            try c.encode(bytes, forKey: .bytes)
            try c.encode(capacityBytes, forKey: .capacityBytes)
            try c.encode(levelCounters ?? [:], forKey: .levelCounters)
            try c.encode(lastError, forKey: .lastError)
        }

        enum CodingKeys: String, CodingKey {
            case level, kind, gets, hits, misses, errors, hitRatio, sets, setErrors, removes, removeErrors, clears
            case memoryWarnings, backfills, backfillFailures, getP50Nanoseconds, getP99Nanoseconds
            case entries, countLimit, bytes, capacityBytes, levelCounters, lastError
        }
    }

    var pipeline: String
    var levels: [Level]
}
