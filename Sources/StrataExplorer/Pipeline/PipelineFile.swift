import Foundation
import Strata
import StrataRedis
import Yams

/// A problem in a pipeline file, with where it is.
public struct PipelineFileError: Error, Equatable, CustomStringConvertible {
    public let file: String
    public let line: Int?
    public let field: String?
    public let message: String

    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": "
        if let field { text += "\(field): " }
        return text + message
    }
}

/// Reads pipeline files (YAML). See `Examples/pipeline.yaml` and the README.
public enum PipelineFile {
    static let levelFields: [String: Set<String>] = [
        "memory": ["capacity", "count", "policy", "sliding"],
        "disk": ["path", "capacity", "policy"],
        "origin": ["latency", "jitter", "failure-rate", "value-size"],
        "http": ["base-url", "timeout"],
        "redis": ["url", "prefix", "leases"],
    ]
    static let commonFields: Set<String> = ["name", "kind", "ttl", "pooled", "cap-requests", "condition"]

    /// Reads and parses the pipeline file at `path`: a regular file of at
    /// most ``InputFile/maxBytes`` (anything else is a ``PipelineFileError``
    /// saying why, never a wait or an unbounded read).
    public static func load(path: String) throws -> PipelineSpec {
        let text: String
        do {
            text = try InputFile.text(path)
        } catch {
            throw PipelineFileError(file: path, line: nil, field: nil,
                                    message: error.message(unreadable: "cannot read the file", kind: "pipeline file"))
        }
        return try parse(text, file: path)
    }

    public static func parse(_ text: String, file: String) throws -> PipelineSpec {
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            throw PipelineFileError(file: file, line: yamlLine(error), field: nil, message: "not valid YAML: \(yamlProblem(error))")
        }
        guard let root, let mapping = root.mapping else {
            throw PipelineFileError(file: file, line: root?.mark?.line, field: nil,
                                    message: "expected a mapping with a `levels:` list")
        }
        var name = "pipeline"
        var levelsNode: Node?
        var failSafe: FailSafeSpec?
        var refreshAhead: (fraction: Double, line: Int?)?
        for (key, value) in mapping {
            switch key.string {
            case "name":
                // `name: ~` (a YAML null) is no name, as when the field is left out.
                if isNull(value) { continue }
                name = try string(value, field: "name", file: file)
                if hasControlCharacters(name) {
                    throw PipelineFileError(file: file, line: value.mark?.line, field: "name",
                                            message: "the name contains control characters; names are printable text")
                }
            case "levels": levelsNode = value
            case "fail-safe": failSafe = try parseFailSafe(value, file: file)
            case "refresh-ahead": refreshAhead = try parseRefreshAhead(value, file: file).map { ($0, key.mark?.line) }
            default:
                throw PipelineFileError(file: file, line: key.mark?.line, field: key.string,
                                        message: "unknown field (expected name, levels, fail-safe, refresh-ahead)")
            }
        }
        guard let levelsNode else {
            throw PipelineFileError(file: file, line: root.mark?.line, field: "levels", message: "missing: list the levels top to bottom")
        }
        guard let sequence = levelsNode.sequence, !sequence.isEmpty else {
            throw PipelineFileError(file: file, line: levelsNode.mark?.line, field: "levels", message: "expected a non-empty list of levels")
        }
        var levels: [LevelSpec] = []
        var byName: [String: LevelSpec] = [:]
        for (index, node) in sequence.enumerated() {
            let level = try parseLevel(node, index: index, file: file, loads: refreshAhead != nil)
            if let other = byName[level.name] {
                throw PipelineFileError(file: file, line: level.line, field: "levels[\(index)].name",
                                        message: "duplicate level name \"\(level.name)\" (also on line \(other.line ?? 0))")
            }
            byName[level.name] = level
            levels.append(level)
        }
        // A simulated origin has every key: the levels below it would never be asked.
        for (index, level) in levels.enumerated().dropLast() {
            if case .origin = level.kind {
                throw PipelineFileError(file: file, line: level.line, field: "levels[\(index)].kind",
                                        message: "an origin has every key, so the \(levels.count - index - 1) level(s) below it would never be asked: put it last")
            }
        }
        if let refreshAhead { try checkLoader(levels, line: refreshAhead.line, file: file) }
        return PipelineSpec(name: name, levels: levels, failSafe: failSafe, refreshAhead: refreshAhead?.fraction, file: file)
    }

    /// `refresh-ahead: 0.8`: a fraction strictly between 0 and 1 (`~` turns it off).
    static func parseRefreshAhead(_ node: Node, file: String) throws -> Double? {
        if isNull(node) { return nil }
        guard let text = node.scalar?.string, let fraction = Double(text), fraction > 0, fraction < 1 else {
            throw PipelineFileError(file: file, line: node.mark?.line, field: "refresh-ahead",
                                    message: "expected a fraction of the TTL between 0 and 1 such as 0.8, got \"\(node.scalar.map { printable($0.string) } ?? "a list or mapping")\"")
        }
        return fraction
    }

    /// Refresh ahead loads through the last level: an origin (simulated or
    /// http) below at least one level that stores, with the `ttl` its values are kept.
    static func checkLoader(_ levels: [LevelSpec], line: Int?, file: String) throws {
        guard let origin = levels.last, origin.kind.isOrigin else {
            throw PipelineFileError(file: file, line: line, field: "refresh-ahead",
                                    message: "the last level loads the values: make it an origin or http level (it is a \(levels.last?.kind.label ?? "?") level)")
        }
        guard levels.count > 1 else {
            throw PipelineFileError(file: file, line: line, field: "refresh-ahead",
                                    message: "no level above the origin keeps what it loads: add one (memory, disk, redis)")
        }
        // Only the last level loads: an http level above it keeps nothing.
        if let index = levels.dropLast().firstIndex(where: { $0.kind.isOrigin && $0.ttl != nil }) {
            throw PipelineFileError(file: file, line: levels[index].line, field: "levels[\(index)].ttl",
                                    message: "only the last level loads under refresh-ahead: an \(levels[index].kind.label) level above it takes no ttl")
        }
        guard origin.ttl != nil else {
            throw PipelineFileError(file: file, line: origin.line, field: "levels[\(levels.count - 1)].ttl",
                                    message: "missing: with refresh-ahead, the origin's ttl is how long each value it loads is kept (e.g. ttl: 30s)")
        }
    }

    /// `fail-safe: {max-stale: 1h, soft-timeout: 100ms, hard-timeout: 2s}`
    /// (`max-stale` required; `~` turns it off).
    static func parseFailSafe(_ node: Node, file: String) throws -> FailSafeSpec? {
        if isNull(node) { return nil }
        guard let mapping = node.mapping else {
            throw PipelineFileError(file: file, line: node.mark?.line, field: "fail-safe",
                                    message: "expected a mapping with max-stale (and soft-timeout, hard-timeout)")
        }
        var durations: [String: Duration] = [:]
        for (key, value) in mapping {
            let field = key.string ?? "?"
            guard ["max-stale", "soft-timeout", "hard-timeout"].contains(field) else {
                throw PipelineFileError(file: file, line: key.mark?.line, field: "fail-safe.\(field)",
                                        message: "unknown field (expected max-stale, soft-timeout, hard-timeout)")
            }
            if isNull(value) { continue }
            guard let text = value.string, let duration = Units.parseDuration(text), duration > .zero else {
                throw PipelineFileError(file: file, line: value.mark?.line, field: "fail-safe.\(field)",
                                        message: "expected a duration such as 100ms, 2s or 1h, got \"\(value.string ?? "?")\"")
            }
            durations[field] = duration
        }
        guard let maxStale = durations["max-stale"] else {
            throw PipelineFileError(file: file, line: node.mark?.line, field: "fail-safe.max-stale",
                                    message: "missing: how old a value may be when it is answered stale (e.g. 1h)")
        }
        return FailSafeSpec(maxStale: maxStale, softTimeout: durations["soft-timeout"], hardTimeout: durations["hard-timeout"])
    }

    /// `loads`: the pipeline has `refresh-ahead:`, so an origin takes a `ttl`
    /// (how long what it loads is kept).
    static func parseLevel(_ node: Node, index: Int, file: String, loads: Bool = false) throws -> LevelSpec {
        let path = "levels[\(index)]"
        guard let mapping = node.mapping else {
            throw PipelineFileError(file: file, line: node.mark?.line, field: path, message: "expected a mapping with `kind:`")
        }
        var fields: [String: Node] = [:]
        var keyLines: [String: Int] = [:]
        for (key, value) in mapping {
            // A list or mapping as a key is no field: refused, not skipped.
            guard key.scalar != nil, let name = key.string else {
                throw PipelineFileError(file: file, line: key.mark?.line, field: path,
                                        message: "expected a field name, got a \(key.sequence != nil ? "list" : "mapping") as a key")
            }
            fields[name] = value
            keyLines[name] = key.mark?.line
        }
        guard let kindNode = fields["kind"], !isNull(kindNode) else {
            throw PipelineFileError(file: file, line: node.mark?.line, field: "\(path).kind",
                                    message: "missing (one of memory, disk, origin, http, redis)")
        }
        let kind = try string(kindNode, field: "\(path).kind", file: file)
        guard let allowed = levelFields[kind] else {
            throw PipelineFileError(file: file, line: kindNode.mark?.line, field: "\(path).kind",
                                    message: "unknown level kind \"\(kind)\" (expected memory, disk, origin, http, redis)")
        }
        for (field, _) in fields where !allowed.contains(field) && !commonFields.contains(field) {
            throw PipelineFileError(file: file, line: keyLines[field], field: "\(path).\(field)",
                                    message: "unknown field for a \(kind) level (allowed: \((allowed.union(commonFields)).sorted().joined(separator: ", ")))")
        }
        // A YAML null (`~`, `null` or nothing after the colon) is the field left out.
        func value<T>(_ field: String, _ parse: (Node) throws -> T) throws -> T? {
            guard let node = fields[field], !isNull(node) else { return nil }
            return try parse(node)
        }
        func size(_ field: String, limit: Int = Units.maxBytes) throws -> Int? {
            try value(field) { node in
                let text = node.string ?? "?"
                do throws(Units.BytesError) {
                    guard let string = node.string else { throw .notASize }
                    return try Units.bytes(string, limit: limit)
                } catch .tooLarge(let limit) {
                    throw PipelineFileError(file: file, line: node.mark?.line, field: "\(path).\(field)",
                                            message: "too large: \"\(text)\" is over the maximum of \(Units.exactBytes(limit))")
                } catch {
                    throw PipelineFileError(file: file, line: node.mark?.line, field: "\(path).\(field)",
                                            message: "expected a size such as 64KiB or 10MiB, got \"\(text)\"")
                }
            }
        }
        func duration(_ field: String) throws -> Duration? {
            try value(field) { node in
                guard let text = node.string, let duration = Units.parseDuration(text) else {
                    throw PipelineFileError(file: file, line: node.mark?.line, field: "\(path).\(field)",
                                            message: "expected a duration such as 50ms, 5s or 10m, got \"\(node.string ?? "?")\"")
                }
                return duration
            }
        }
        func integer(_ field: String, range: ClosedRange<Int>) throws -> Int? {
            try value(field) { node in
                guard let text = node.string, let number = Int(text), range.contains(number) else {
                    throw PipelineFileError(file: file, line: node.mark?.line, field: "\(path).\(field)",
                                            message: "expected a whole number from \(range.lowerBound) to \(range.upperBound), got \"\(node.string ?? "?")\"")
                }
                return number
            }
        }
        func text(_ field: String) throws -> String? { try value(field) { try string($0, field: "\(path).\(field)", file: file) } }
        func required<T>(_ field: String, _ found: T?) throws -> T {
            guard let found else {
                throw PipelineFileError(file: file, line: node.mark?.line, field: "\(path).\(field)", message: "missing (required for a \(kind) level)")
            }
            return found
        }

        let levelKind: LevelSpec.Kind
        switch kind {
        case "memory":
            levelKind = .memory(capacity: try required("capacity", try size("capacity")),
                                countLimit: try integer("count", range: 1...100_000_000))
        case "disk":
            // No path is a temporary directory; an empty one names no directory
            // (it would be the current one) and is refused.
            let diskPath = try text("path")
            if diskPath?.isEmpty == true {
                throw PipelineFileError(file: file, line: fields["path"]?.mark?.line, field: "\(path).path",
                                        message: "empty: name a directory, or leave the field out for a temporary one")
            }
            levelKind = .disk(path: diskPath, capacity: try required("capacity", try size("capacity")))
        case "origin":
            let rate = try value("failure-rate") { node -> Double in
                guard let text = node.string, let rate = Double(text), (0...1).contains(rate) else {
                    throw PipelineFileError(file: file, line: node.mark?.line, field: "\(path).failure-rate",
                                            message: "expected a number from 0 to 1, got \"\(node.string ?? "?")\"")
                }
                return rate
            }
            levelKind = .origin(latency: try duration("latency") ?? .milliseconds(40),
                                jitter: try duration("jitter") ?? .zero,
                                failureRate: rate ?? 0,
                                valueSize: try size("value-size", limit: SimulatedOrigin.maxValueSize) ?? 512)
        case "http":
            let base = try required("base-url", try text("base-url"))
            guard let url = URL(string: base), let scheme = url.scheme, ["http", "https"].contains(scheme) else {
                throw PipelineFileError(file: file, line: fields["base-url"]?.mark?.line, field: "\(path).base-url",
                                        message: "expected an http:// or https:// URL, got \"\(base)\"")
            }
            levelKind = .http(baseURL: base, timeout: try duration("timeout") ?? .seconds(10))
        default:
            let url = try required("url", try text("url"))
            guard url.hasPrefix("redis://") else {
                throw PipelineFileError(file: file, line: fields["url"]?.mark?.line, field: "\(path).url",
                                        message: "expected redis://host:port[/db], got \"\(RedisConfiguration.redacted(url))\"")
            }
            levelKind = .redis(url: url, prefix: try text("prefix") ?? "strata:", leases: try flag("leases") ?? false)
        }
        if let ttlNode = fields["ttl"], kind == "origin" || kind == "http", !loads {
            throw PipelineFileError(file: file, line: ttlNode.mark?.line, field: "\(path).ttl",
                                    message: "ttl applies to levels that store (memory, disk, redis), not to a \(kind) origin"
                                        + " (with refresh-ahead, it is how long the values an origin loads are kept)")
        }
        func flag(_ field: String) throws -> Bool? {
            try value(field) { node -> Bool in
                switch node.string?.lowercased() {
                case "true", "yes", "on": return true
                case "false", "no", "off": return false
                default:
                    throw PipelineFileError(file: file, line: node.mark?.line, field: "\(path).\(field)",
                                            message: "expected true or false, got \"\(node.string ?? "?")\"")
                }
            }
        }
        let pooled = try flag("pooled")
        let condition = try text("condition")
        if let condition, condition.isEmpty || condition.contains(where: { $0.isWhitespace }) || hasControlCharacters(condition) {
            throw PipelineFileError(file: file, line: fields["condition"]?.mark?.line, field: "\(path).condition",
                                    message: "a toggle name is one word, got \"\(printable(condition))\"")
        }
        let policy = try value("policy") { node -> EvictionPolicy in
            guard let text = node.string, let policy = EvictionPolicy(rawValue: text.lowercased()) else {
                throw PipelineFileError(file: file, line: node.mark?.line, field: "\(path).policy",
                                        message: "expected lru or adaptive, got \"\(node.string ?? "?")\"")
            }
            return policy
        }
        // A level's name is typed after `clear` and printed in tables and
        // panes: one word of printable text.
        let name = try text("name")
        if let name, name.isEmpty || name.contains(where: { $0.isWhitespace }) || hasControlCharacters(name) {
            throw PipelineFileError(file: file, line: fields["name"]?.mark?.line, field: "\(path).name",
                                    message: "a level name is one word of printable text, got \"\(printable(name))\"")
        }
        var spec = LevelSpec(
            name: name ?? (index == 0 ? "L1" : "\(kind)\(index + 1)"),
            kind: levelKind,
            ttl: try duration("ttl"),
            pooled: pooled ?? false,
            capRequests: try integer("cap-requests", range: 1...100_000),
            condition: condition,
            policy: policy,
            line: node.mark?.line
        )
        spec.sliding = try duration("sliding")
        return spec
    }

    /// A YAML null: a plain `~`, `null` or empty scalar (quoted `"~"` is text).
    static func isNull(_ node: Node) -> Bool { node.null != nil }

    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    /// `text` with control characters as `·`, for a message on one line.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "·" : $0 }))
    }

    static func string(_ node: Node, field: String, file: String) throws -> String {
        guard let scalar = node.scalar else {
            throw PipelineFileError(file: file, line: node.mark?.line, field: field, message: "expected a single value")
        }
        return scalar.string
    }

    /// The line a YAML error is on. A duplicated key is its own case in Yams,
    /// with the mark (of the key's first occurrence) in its context.
    static func yamlLine(_ error: YamlError) -> Int? {
        switch error {
        case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): mark.line
        case .duplicatedKeysInMapping(_, let context): context.mark.line
        default: nil
        }
    }

    static func yamlProblem(_ error: YamlError) -> String {
        switch error {
        case .scanner(_, let problem, _, _), .parser(_, let problem, _, _), .composer(_, let problem, _, _): problem
        case .duplicatedKeysInMapping(let duplicates, _):
            duplicates.count == 1
                ? "the key \"\(duplicates[0])\" appears more than once in this mapping"
                : "the keys \(duplicates.map { "\"\($0)\"" }.joined(separator: ", ")) appear more than once in this mapping"
        default: "\(error)".split(separator: "\n").first.map(String.init) ?? "\(error)"
        }
    }
}
