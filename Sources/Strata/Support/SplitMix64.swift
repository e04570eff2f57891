/// SplitMix64, the package's one seeded generator: the same seed gives the
/// same numbers on every machine and run (workloads, simulations, tests and
/// fuzzers name their sequence by its seed). Never seed two with seeds a
/// multiple of its increment apart: their streams are shifted copies of each
/// other (issue 10, D4); to seed several generators, draw their seeds from
/// one SplitMix64.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    package var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform number in [0, 1) with 53 random bits.
    package mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }
}
