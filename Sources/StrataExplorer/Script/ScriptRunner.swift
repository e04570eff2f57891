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

    /// Per-level statistics as JSON.
    public func statisticsJSON() -> String {
        let report = ScriptReport(pipeline: model.pipeline.spec.name, levels: model.currentPanes().map {
            ScriptReport.Level(level: $0.name, kind: $0.summary, statistics: $0.stats, entries: $0.entries,
                               bytes: $0.bytes, lastError: $0.lastError)
        })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(report) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// The JSON `strata run --json` prints.
struct ScriptReport: Encodable {
    struct Level: Encodable {
        var level: String
        var kind: String
        var statistics: StatisticsSnapshot
        var entries: Int?
        var bytes: Int?
        var lastError: String?
    }

    var pipeline: String
    var levels: [Level]
}
