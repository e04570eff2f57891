import Strata

/// A seeded random number generator (SplitMix64): the same seed gives the
/// same numbers on every machine and run, so a workload and its `--seed`
/// name one request sequence.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var base: SplitMix64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        base = SplitMix64(seed: seed)
    }

    public mutating func next() -> UInt64 { base.next() }

    /// A uniform number in [0, 1) with 53 random bits.
    public mutating func nextUnit() -> Double { base.nextUnit() }
}
