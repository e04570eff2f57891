import Strata

/// The differential tests' random source: the package's ``SplitMix64``, its
/// seed spread first (seeds 1, 2, 3… are neighbours), with the draws those
/// tests make. The same seed gives the same run on every machine.
public struct SeededGenerator: Sendable {
    private var source: SplitMix64

    public init(seed: UInt64) { source = SplitMix64(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 0xD1B5_4A32_D192_ED03) }

    public mutating func next() -> UInt64 { source.next() }

    /// A number in `range` (not empty).
    public mutating func int(_ range: Range<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    /// `true` with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < p }
    /// One of `items` (not empty).
    public mutating func pick<T>(_ items: [T]) -> T { items[int(0..<items.count)] }
}
