import Foundation
import Strata

/// The formats `:export` writes, by the file's extension.
enum ExportFormat {
    case json, csv

    init?(path: String) {
        switch (path as NSString).pathExtension.lowercased() {
        case "json": self = .json
        case "csv": self = .csv
        default: return nil
        }
    }
}

/// What `:export` writes: each level's counters and settings as the panes
/// show them now (frozen ones while paused).
///
/// JSON: `{"pipeline": NAME, "levels": [LEVEL, …]}`, each LEVEL an object
/// with the fields of `strata run --json` (``ScriptReport``: `level`,
/// `kind`, counts, `hitRatio`, `getP50Nanoseconds`, `entries`, `countLimit`,
/// `bytes`, `capacityBytes`, `levelCounters`, `lastError`) and the settings:
/// `policy` (`lru`, `adaptive`, null), `ttlSeconds`, `slidingSeconds`,
/// `getsPerSecond`, `hitsPerSecond`, `toggle` and `toggleState` (`on`,
/// `off`, null), `configuration` (the pane title's live settings). A figure
/// a level does not have is null. JSON also has `resilience`: the
/// pipeline's fail-safe and refresh-ahead settings (`maxStaleSeconds`,
/// `softTimeoutSeconds`, `hardTimeoutSeconds`, `refreshAhead`) and what they
/// did (`staleAnswers`, `softTimeouts`, `hardTimeouts`, `refreshesStarted`,
/// `refreshesFailed`, `refreshesDropped`), or null without either. CSV: one
/// header row of the same names as the levels' (`levelCounters` as one
/// `levelCounters.NAME` column per counter any level has), one row per
/// level, an empty cell for null.
struct PipelineExport {
    let pipeline: String
    let levels: [[(String, ScriptReport.Field)]]
    let resilience: [(String, ScriptReport.Field)]?

    init(pipeline: String, panes: [PaneState], specs: [LevelSpec],
         resilience options: ResilienceOptions? = nil, statistics: ResilienceStatistics? = nil) {
        self.pipeline = pipeline
        resilience = options.map { options in
            let seconds = { (duration: Duration?) in ScriptReport.Field.double(duration.map { Double($0.nanoseconds) / 1e9 }) }
            let count = { (figure: KeyPath<ResilienceStatistics, Int>) in ScriptReport.Field.int(statistics?[keyPath: figure]) }
            return [
                ("maxStaleSeconds", seconds(options.maxStale)), ("softTimeoutSeconds", seconds(options.softTimeout)),
                ("hardTimeoutSeconds", seconds(options.hardTimeout)), ("refreshAhead", .double(options.refreshAhead)),
                ("staleAnswers", count(\.staleAnswers)), ("softTimeouts", count(\.softTimeouts)),
                ("hardTimeouts", count(\.hardTimeouts)), ("refreshesStarted", count(\.refreshesStarted)),
                ("refreshesFailed", count(\.refreshesFailed)), ("refreshesDropped", count(\.refreshesDropped)),
            ]
        }
        levels = zip(panes, specs).map { pane, spec in
            let seconds = { (duration: Duration?) in duration.map { Double($0.nanoseconds) / 1e9 } }
            return ScriptReport.Level(pane).fields + [
                ("policy", .string((spec.policy ?? spec.kind.defaultPolicy)?.rawValue)),
                ("ttlSeconds", .double(seconds(spec.ttl))), ("slidingSeconds", .double(seconds(spec.sliding))),
                ("getsPerSecond", .double(pane.getsPerSecond)), ("hitsPerSecond", .double(pane.hitsPerSecond)),
                ("toggle", .string(pane.condition)), ("toggleState", .string(pane.conditionOn.map { $0 ? "on" : "off" })),
                ("configuration", .string(pane.configuration)),
            ]
        }
    }

    func text(_ format: ExportFormat) -> String {
        switch format {
        case .json: json()
        case .csv: csv()
        }
    }

    func json() -> String {
        struct Report: Encodable {
            let pipeline: String
            let levels: [Level]
            let resilience: Level?

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: ScriptReport.Level.Name.self)
                try container.encode(pipeline, forKey: .init(stringValue: "pipeline"))
                try container.encode(levels, forKey: .init(stringValue: "levels"))
                try container.encode(resilience, forKey: .init(stringValue: "resilience"))
            }
        }
        struct Level: Encodable {
            let fields: [(String, ScriptReport.Field)]
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: ScriptReport.Level.Name.self)
                for (name, field) in fields { try container.encode(field, forKey: .init(stringValue: name)) }
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Report(pipeline: pipeline, levels: levels.map(Level.init), resilience: resilience.map(Level.init)))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    func csv() -> String {
        let counterNames = Set(levels.flatMap { fields in
            fields.flatMap { name, field -> [String] in
                if case .counts(let counts) = field { return Array(counts.keys) }
                return []
            }
        }).sorted()
        var header: [String] = []
        for (name, field) in levels.first ?? [] {
            if case .counts = field { header += counterNames.map { "levelCounters.\($0)" } } else { header.append(name) }
        }
        let rows = levels.map { fields in
            fields.flatMap { _, field -> [String] in
                switch field {
                case .int(let value): [value.map(String.init) ?? ""]
                case .uint(let value): [value.map(String.init) ?? ""]
                case .double(let value): [value.map { "\($0)" } ?? ""]
                case .string(let value): [value.map(Self.cell) ?? ""]
                case .counts(let counts): counterNames.map { counts[$0].map(String.init) ?? "" }
                }
            }
        }
        return ([header] + rows).map { $0.joined(separator: ",") }.joined(separator: "\n") + "\n"
    }

    /// A CSV cell (RFC 4180): quoted, quotes doubled, when it holds a comma, quote or line break.
    static func cell(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
