import Foundation
import Strata

/// Writes a ``PipelineSpec`` as a pipeline file (`:save`) that
/// ``PipelineFile/parse(_:file:)`` reads back to the same spec: every field
/// a level has is written (defaults too), sizes and durations exactly (in
/// the largest unit that divides them), text double-quoted and escaped (a
/// name such as `null` or `~` stays text).
public enum PipelineWriter {
    /// The pipeline file's text for `spec` (its `file` and lines are not written).
    public static func yaml(_ spec: PipelineSpec) -> String {
        var lines = ["# strata pipeline, saved by the explorer (strata check FILE validates it)",
                     "name: \(quoted(spec.name))"]
        if let failSafe = spec.failSafe {
            lines.append("fail-safe:")
            lines.append("  max-stale: \(duration(failSafe.maxStale))")
            if let soft = failSafe.softTimeout { lines.append("  soft-timeout: \(duration(soft))") }
            if let hard = failSafe.hardTimeout { lines.append("  hard-timeout: \(duration(hard))") }
        }
        if let refreshAhead = spec.refreshAhead { lines.append("refresh-ahead: \(refreshAhead)") }
        lines.append("levels:")
        for level in spec.levels {
            var fields: [(String, String)] = [("name", quoted(level.name)), ("kind", level.kind.label)]
            switch level.kind {
            case .memory(let capacity, let countLimit):
                fields.append(("capacity", size(capacity)))
                if let countLimit { fields.append(("count", "\(countLimit)")) }
            case .disk(let path, let capacity):
                if let path { fields.append(("path", quoted(path))) }
                fields.append(("capacity", size(capacity)))
            case .origin(let latency, let jitter, let failureRate, let valueSize):
                fields += [("latency", duration(latency)), ("jitter", duration(jitter)),
                           ("failure-rate", "\(failureRate)"), ("value-size", size(valueSize))]
            case .http(let baseURL, let timeout):
                fields += [("base-url", quoted(baseURL)), ("timeout", duration(timeout))]
            case .redis(let url, let prefix, let leases):
                fields += [("url", quoted(url)), ("prefix", quoted(prefix)), ("leases", "\(leases)")]
            }
            if let policy = level.policy { fields.append(("policy", policy.rawValue)) }
            if let sliding = level.sliding { fields.append(("sliding", duration(sliding))) }
            if let ttl = level.ttl { fields.append(("ttl", duration(ttl))) }
            if level.pooled { fields.append(("pooled", "true")) }
            if let cap = level.capRequests { fields.append(("cap-requests", "\(cap)")) }
            if let condition = level.condition { fields.append(("condition", quoted(condition))) }
            for (index, (field, value)) in fields.enumerated() {
                lines.append("\(index == 0 ? "  - " : "    ")\(field): \(value)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `1h`, `5m`, `30s`, `250ms`, `40us`, or fractional microseconds: the
    /// largest unit that gives a whole number, so it reads back exactly.
    static func duration(_ duration: Duration) -> String {
        let nanoseconds = duration.nanoseconds
        if nanoseconds == 0 { return "0s" }
        for (unit, size) in [("h", Int64(3_600_000_000_000)), ("m", 60_000_000_000), ("s", 1_000_000_000),
                             ("ms", 1_000_000), ("us", 1_000)] where nanoseconds % size == 0 {
            return "\(nanoseconds / size)\(unit)"
        }
        return "\(Double(nanoseconds) / 1_000)us"
    }

    /// `64KiB`, `10MiB`, or plain bytes: exact, in the largest binary unit that divides it.
    static func size(_ bytes: Int) -> String {
        for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] where bytes > 0 && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift)\(unit)"
        }
        return "\(bytes)"
    }

    /// A YAML double-quoted scalar: backslash, quote and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.properties.generalCategory == .control || scalar.value == 0x7F {
                    out += String(format: "\\u%04X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
