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

    /// A script's lines as `readLine` gives them on stdin: split at each
    /// `\n` (by scalar: Swift reads `\r\n` as one Character, which a
    /// Character-based split never matches) without a line's final `\r`,
    /// and without a leading byte-order mark (U+FEFF).
    public static func lines(of text: String) -> [String] {
        var text = text
        if text.unicodeScalars.first == "\u{FEFF}" { text.unicodeScalars.removeFirst() }
        return text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var scalars = String.UnicodeScalarView(line)
            if scalars.last == "\r" { scalars.removeLast() }
            return String(scalars)
        }
    }

    /// A message as one line of text: control characters it quotes from the
    /// script (`clear x<ESC>[2J`) are shown as `·`, as on the screen, never sent
    /// to the terminal.
    static func printable(_ message: String) -> String {
        String(String.UnicodeScalarView(message.unicodeScalars.map { $0.properties.generalCategory == .control ? "·" : $0 }))
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
                writeError("\(source):\(index + 1): \(Self.printable(error.message))")
                failures += 1
                continue
            }
            switch command {
            case .quit: return failures
            case .theme, .hz, .help:
                write("> \(Self.printable(line))\n  (no effect without a screen)")
                continue
            default: break
            }
            if await !perform(command, line: line, location: "\(source):\(index + 1)") { failures += 1 }
        }
        await finish()
        return failures
    }

    /// Runs one command and prints its outcome (a timed `load`, a `replay` or
    /// a `load trace` once it has ended); false when it failed.
    public func perform(_ command: Command, line: String, location: String) async -> Bool {
        let outcome = await model.execute(command)
        if case .load(_, _, _, .some) = command, let workload = model.workload {
            await workload.finished()
            write("> \(Self.printable(line))\n  \(workload.completed) gets in \(String(format: "%.1f", workload.elapsedSeconds))s")
        } else if !outcome.isError, command.isReplay, let replay = model.lastReplay {
            await model.replayFinished()
            let failed = replay.failed > 0 ? " (\(replay.failed) failed)" : ""
            write("> \(Self.printable(line))\n  \(replay.completed) requests in \(String(format: "%.1f", replay.elapsedSeconds))s\(failed)")
        } else {
            write("> \(Self.printable(line))\n  \(Self.printable(outcome.message))")
        }
        if outcome.isError {
            writeError("\(location): \(Self.printable(outcome.message))")
            return false
        }
        return true
    }

    /// Stops the workload, if one still runs, and waits for pending writes.
    public func finish() async {
        if let workload = model.workload {
            workload.stop()
            await workload.finished()
        }
        await model.pipeline.cache.waitForPendingWrites()
    }

    /// Per-level statistics as an aligned table, then what the fail-safe
    /// and refresh ahead did, if the pipeline has them.
    public func statisticsTable() -> String {
        let header = ["level", "kind", "gets", "hits", "misses", "hit%", "sets", "rm", "inv", "errors", "back-fills", "entries", "bytes", "p50", "p99"]
        var rows = [header]
        for pane in model.currentPanes() {
            let s = pane.stats
            rows.append([
                pane.name, pane.summary, "\(s.gets)", "\(s.hits)", "\(s.misses)",
                s.requests == 0 ? "-" : String(format: "%.1f", s.hitRatio * 100), "\(s.sets)", "\(s.removes)", "\(s.invalidations)",
                "\(s.errors + s.setErrors)", "\(s.backfills)", pane.entries.map(String.init) ?? "-",
                pane.bytes.map(String.init) ?? "-", Units.latency(s.getP50), Units.latency(s.getP99),
            ])
        }
        return (Self.aligned(rows) + [model.resilienceSummary].compactMap { $0 }).joined(separator: "\n")
    }

    /// Rows padded to columns by display width (a wide character takes two
    /// columns), two spaces apart; never cut.
    static func aligned(_ rows: [[String]]) -> [String] {
        let columns = rows.map(\.count).max() ?? 0
        let widths = (0..<columns).map { column in rows.map { $0.count > column ? TextWidth.of($0[column]) : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { $1 + String(repeating: " ", count: widths[$0] - TextWidth.of($1)) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }
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
/// not know a figure (an origin has no entries), so every level has every key.
struct ScriptReport: Encodable {
    /// One figure of a level; `nil` is written as `null`.
    enum Field: Encodable {
        case int(Int?), uint(UInt64?), double(Double?), string(String?), counts([String: Int])

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .int(let value): try value.map { try container.encode($0) } ?? container.encodeNil()
            case .uint(let value): try value.map { try container.encode($0) } ?? container.encodeNil()
            case .double(let value): try value.map { try container.encode($0) } ?? container.encodeNil()
            case .string(let value): try value.map { try container.encode($0) } ?? container.encodeNil()
            case .counts(let value): try container.encode(value)
            }
        }
    }

    struct Level: Encodable {
        /// The level's figures (the encoder sorts the keys).
        let fields: [(String, Field)]

        init(_ pane: PaneState) {
            let s = pane.stats
            fields = [
                ("level", .string(pane.name)), ("kind", .string(pane.summary)),
                ("gets", .int(s.gets)), ("hits", .int(s.hits)), ("misses", .int(s.misses)), ("errors", .int(s.errors)),
                ("hitRatio", .double(s.requests == 0 ? nil : (s.hitRatio * 1_000_000).rounded() / 1_000_000)),
                ("sets", .int(s.sets)), ("setErrors", .int(s.setErrors)), ("removes", .int(s.removes)),
                ("removeErrors", .int(s.removeErrors)), ("invalidations", .int(s.invalidations)), ("clears", .int(s.clears)),
                ("memoryWarnings", .int(s.memoryWarnings)), ("backfills", .int(s.backfills)),
                ("backfillFailures", .int(s.backfillFailures)),
                ("getP50Nanoseconds", .uint(s.getP50)), ("getP99Nanoseconds", .uint(s.getP99)),
                ("entries", .int(pane.entries)), ("countLimit", .int(pane.countLimit)),
                ("bytes", .int(pane.bytes)), ("capacityBytes", .int(pane.capacity)),
                // The level's own counters (a memory level's `evictions`), all counts.
                ("levelCounters", .counts(s.levelCounters ?? [:])), ("lastError", .string(pane.lastError)),
            ]
        }

        struct Name: CodingKey {
            let stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Name.self)
            for (name, field) in fields { try container.encode(field, forKey: Name(stringValue: name)) }
        }
    }

    var pipeline: String
    var levels: [Level]
}
