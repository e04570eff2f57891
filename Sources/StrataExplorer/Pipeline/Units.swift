import Foundation

/// Sizes (`64KiB`, `10MB`, `512`) and durations (`50ms`, `1.5s`, `5m`, `1h`).
public enum Units {
    public static func parseBytes(_ text: String) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1024 * 1024), ("GiB", 1024 * 1024 * 1024),
            ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000),
            ("K", 1024), ("M", 1024 * 1024), ("G", 1024 * 1024 * 1024), ("B", 1),
        ]
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            guard let number = Double(trimmed.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)),
                  number >= 0, number * factor < Double(Int.max / 2) else { return nil }
            return Int(number * factor)
        }
        guard let plain = Int(trimmed), plain >= 0 else { return nil }
        return plain
    }

    public static func parseDuration(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            guard let number = Double(trimmed.dropLast(suffix.count)), number >= 0, number * factor < 1e9 else { return nil }
            return .nanoseconds(Int64((number * factor * 1e9).rounded()))
        }
        return nil
    }

    public static func formatBytes(_ bytes: Int) -> String {
        let value = Double(bytes)
        if bytes >= 1 << 30 { return String(format: "%.1f GiB", value / Double(1 << 30)) }
        if bytes >= 1 << 20 { return String(format: "%.1f MiB", value / Double(1 << 20)) }
        if bytes >= 1 << 10 { return String(format: "%.1f KiB", value / Double(1 << 10)) }
        return "\(bytes) B"
    }

    /// Compact bytes for panes, in the pipeline file's binary units: `812B`,
    /// `31.5KiB`, `4.0MiB`, `1.2GiB`.
    public static func shortBytes(_ bytes: Int) -> String {
        let value = Double(bytes)
        if bytes >= 1 << 30 { return String(format: "%.1fGiB", value / Double(1 << 30)) }
        if bytes >= 1 << 20 { return String(format: "%.1fMiB", value / Double(1 << 20)) }
        if bytes >= 1 << 10 { return String(format: "%.1fKiB", value / Double(1 << 10)) }
        return "\(bytes)B"
    }

    public static func format(_ duration: Duration) -> String {
        let ns = Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
        if ns >= 3_600e9, ns.truncatingRemainder(dividingBy: 3_600e9) == 0 { return "\(Int(ns / 3_600e9))h" }
        if ns >= 60e9, ns.truncatingRemainder(dividingBy: 60e9) == 0 { return "\(Int(ns / 60e9))m" }
        if ns >= 1e9 { return ns.truncatingRemainder(dividingBy: 1e9) == 0 ? "\(Int(ns / 1e9))s" : String(format: "%.1fs", ns / 1e9) }
        if ns >= 1e6 { return String(format: "%.0fms", ns / 1e6) }
        return String(format: "%.0fµs", ns / 1e3)
    }

    /// Latency in nanoseconds, compact: `850ns`, `12µs`, `48ms`, `1.2s`.
    public static func latency(_ ns: UInt64?) -> String {
        guard let ns else { return "-" }
        let value = Double(ns)
        if value >= 1e9 { return String(format: "%.1fs", value / 1e9) }
        if value >= 1e6 { return String(format: "%.0fms", value / 1e6) }
        if value >= 1e3 { return String(format: "%.0fµs", value / 1e3) }
        return "\(ns)ns"
    }

    /// Counts: `999`, `12.3k`, `4.5M`.
    public static func count(_ value: Double) -> String {
        if value >= 1e6 { return String(format: "%.1fM", value / 1e6) }
        if value >= 1e4 { return String(format: "%.1fk", value / 1e3) }
        return String(format: "%.0f", value)
    }
}
