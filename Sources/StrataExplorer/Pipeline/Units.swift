import Foundation

/// Sizes (`64KiB`, `10MB`, `512`) and durations (`50ms`, `1.5s`, `5m`, `1h`).
public enum Units {
    /// The largest size a pipeline file may give: 1 PiB (2^50 bytes). Far
    /// beyond any real memory or disk level, and far enough below `Int.max`
    /// that the levels' cost sums (a capacity plus its slack, a total plus
    /// one more value) cannot overflow and trap.
    public static let maxBytes = 1 << 50

    /// Why a text is not a usable size.
    public enum BytesError: Error, Equatable, Sendable {
        /// Not a number with an optional unit.
        case notASize
        /// A size, but over `limit` bytes.
        case tooLarge(limit: Int)
    }

    /// The bytes `text` names (`512`, `64KiB`, `1.5MB`), at most `limit`.
    /// Separating "not a size" from "too large" lets messages say which.
    public static func bytes(_ text: String, limit: Int = maxBytes) throws(BytesError) -> Int {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [
            ("KiB", 1024), ("MiB", 1024 * 1024), ("GiB", 1024 * 1024 * 1024),
            ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000),
            ("K", 1024), ("M", 1024 * 1024), ("G", 1024 * 1024 * 1024), ("B", 1),
        ]
        for (suffix, factor) in units where trimmed.hasSuffix(suffix) {
            guard let number = Double(trimmed.dropLast(suffix.count).trimmingCharacters(in: .whitespaces)),
                  number.isFinite, number >= 0 else { throw .notASize }
            // Compared as a Double before converting, so no value can trap in Int(_:).
            guard number * factor <= Double(limit) else { throw .tooLarge(limit: limit) }
            return Int(number * factor)
        }
        if let plain = Int(trimmed), plain >= 0 {
            guard plain <= limit else { throw .tooLarge(limit: limit) }
            return plain
        }
        // Digits too many for Int are still a size, just too large.
        if !trimmed.isEmpty, trimmed.allSatisfy({ $0.isASCII && $0.isWholeNumber }) { throw .tooLarge(limit: limit) }
        throw .notASize
    }

    /// ``bytes(_:limit:)``, or nil for a text that is not a size or is over `limit`.
    public static func parseBytes(_ text: String, limit: Int = maxBytes) -> Int? {
        try? bytes(text, limit: limit)
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

    /// A limit in the largest binary unit that divides it exactly: `1 PiB`,
    /// `64 MiB`, `1000 B` (so a stated maximum reads as what it is, unrounded).
    public static func exactBytes(_ bytes: Int) -> String {
        for (shift, unit) in [(50, "PiB"), (40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")]
        where bytes > 0 && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift) \(unit)"
        }
        return "\(bytes) B"
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
