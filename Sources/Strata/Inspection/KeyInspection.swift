/// One key of a level as its ``LevelInspector`` lists it: what the level
/// knows of the entry, read without counting as a use. `nil` fields are
/// figures the level does not keep.
package struct KeyInspection: Equatable, Sendable {
    /// The key as text (its bytes as UTF-8, or hex when they are not).
    package var key: String
    /// Bytes stored (a disk level's file, a memory level's cost).
    package var size: Int?
    /// Time since the entry was written.
    package var age: Duration?
    /// Time until the entry expires; `nil` when it never does.
    package var ttlLeft: Duration?
    /// Hits on this key, when the level counts them per key.
    package var hits: Int?
    /// The admission sketch's estimate of how often the key was requested (0–15).
    package var frequency: Int?

    package init(key: String, size: Int? = nil, age: Duration? = nil, ttlLeft: Duration? = nil,
                 hits: Int? = nil, frequency: Int? = nil) {
        self.key = key
        self.size = size
        self.age = age
        self.ttlLeft = ttlLeft
        self.hits = hits
        self.frequency = frequency
    }

    /// How hot the key is: the frequency estimate, then hits (0 where not kept).
    package var heat: (frequency: Int, hits: Int) { (frequency ?? 0, hits ?? 0) }

    /// Whether the level saw the key requested at all (a frequency or hits above 0).
    package var isHot: Bool { heat != (0, 0) }

    /// Whether `a` ranks above `b` among hot keys: higher frequency, then
    /// more hits, then the smaller key (so a ranking is the same every time).
    package static func isHotter(_ a: KeyInspection, _ b: KeyInspection) -> Bool {
        let (x, y) = (a.heat, b.heat)
        if x != y { return x > y }
        return a.key < b.key
    }

    /// The key's bytes as text: UTF-8 when they are valid, else `0x` and hex.
    package static func text(_ bytes: some Collection<UInt8>) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return "0x" + bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
    }

    /// The time left from `now` until `expiresAt` (ns since 1970, 0: never).
    package static func ttlLeft(expiresAt: Int64, now: Int64) -> Duration? {
        expiresAt == 0 ? nil : .nanoseconds(max(0, expiresAt - now))
    }
}

extension String {
    /// The string with zeros before it up to `width` characters (hex bytes).
    package func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
