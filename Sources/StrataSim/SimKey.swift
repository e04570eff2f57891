import Strata

/// A trace key as the simulated memory level holds it: an integer whose
/// `hashValue` is a fixed mix of the key and a seed, not Swift's `Hasher`
/// (seeded at random per process).
///
/// The adaptive policy's frequency sketch, its ghost lists and the level's
/// shards all work from the key's `hashValue`; with `Int` keys, which keys
/// collided in the sketch depended on the process, and hit ratios moved by
/// about 0.1 point (multi2 @ 1000 by half a point) from one run to the next.
/// With this key a replay is the same in every process for a given seed, and
/// another seed draws other collisions (a way to see how much a row depends
/// on them).
public struct SimKey: Hashable, Sendable {
    /// The trace's key.
    public let key: Int
    /// The key's hash: SplitMix64's output for the key mixed with the salt.
    public let hashValue: Int

    /// `key`, hashed with `salt` (``salt(seed:)``).
    public init(_ key: Int, salt: UInt64) {
        self.key = key
        var mix = SplitMix64(seed: UInt64(bitPattern: Int64(key)) ^ salt)
        hashValue = Int(truncatingIfNeeded: mix.next())
    }

    /// The salt for `seed`: drawn from a SplitMix64 of its own, so that
    /// neighbouring seeds do not give shifted copies of one another's hashes.
    public static func salt(seed: UInt64) -> UInt64 {
        var generator = SplitMix64(seed: seed)
        return generator.next()
    }

    public static func == (lhs: SimKey, rhs: SimKey) -> Bool { lhs.key == rhs.key }

    /// Feeds the fixed hash to `hasher` (a `Set` or `Dictionary` still seeds its own table).
    public func hash(into hasher: inout Hasher) { hasher.combine(hashValue) }
}
