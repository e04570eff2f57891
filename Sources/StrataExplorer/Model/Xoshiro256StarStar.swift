import Strata

/// xoshiro256** (Blackman and Vigna): one per workload worker, each seeded
/// from consecutive SplitMix64 outputs, so workers draw independent streams.
struct Xoshiro256StarStar: RandomNumberGenerator {
    private var s0, s1, s2, s3: UInt64

    init(seeds: inout SplitMix64) {
        s0 = seeds.next(); s1 = seeds.next(); s2 = seeds.next(); s3 = seeds.next()
        if s0 | s1 | s2 | s3 == 0 { s0 = 1 }  // the all-zero state is a fixed point
    }

    mutating func next() -> UInt64 {
        let result = Self.rotate(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = Self.rotate(s3, 45)
        return result
    }

    static func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// A double uniform in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}
