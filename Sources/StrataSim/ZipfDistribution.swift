import Foundation

/// The Zipf distribution over `items` ranks: rank `r` (from 1) is drawn with
/// probability proportional to `1 / r^theta`.
///
/// Sampling is by inverse CDF: the cumulative probabilities are tabulated
/// once, and a uniform number is looked up by binary search, so every draw is
/// exact for any `theta ≥ 0` (0 is uniform). Ranks become keys through
/// ``key(forRank:)``, a fixed bijective scramble, so popular keys are not
/// neighbours.
public struct ZipfDistribution: Sendable {
    /// The number of ranks.
    public let items: Int
    /// The exponent.
    public let theta: Double
    /// `cdf[i]` = P(rank ≤ i + 1); the last entry is exactly 1.
    let cdf: [Double]

    /// The distribution over `items` (≥ 1) ranks with exponent `theta` (≥ 0, finite).
    public init(items: Int, theta: Double) {
        precondition(items >= 1 && theta >= 0 && theta.isFinite, "items ≥ 1 and a finite theta ≥ 0")
        self.items = items
        self.theta = theta
        var cdf = [Double](repeating: 0, count: items)
        var sum = 0.0
        for i in 0..<items {
            sum += 1 / pow(Double(i + 1), theta)
            cdf[i] = sum
        }
        for i in 0..<items { cdf[i] /= sum }
        cdf[items - 1] = 1
        self.cdf = cdf
    }

    /// The probability of rank `rank` (from 1).
    public func probability(ofRank rank: Int) -> Double {
        precondition((1...items).contains(rank))
        return rank == 1 ? cdf[0] : cdf[rank - 1] - cdf[rank - 2]
    }

    /// The rank (from 1) at which the CDF first exceeds `unit` (in [0, 1)).
    public func rank(atUnit unit: Double) -> Int {
        var low = 0, high = items - 1
        while low < high {
            let middle = (low + high) / 2
            if cdf[middle] > unit { high = middle } else { low = middle + 1 }
        }
        return low + 1
    }

    /// A random rank (from 1).
    public func nextRank(using generator: inout SeededGenerator) -> Int {
        rank(atUnit: generator.nextUnit())
    }

    /// The key for `rank`: a bijection of the non-negative 63-bit integers
    /// (xor-shifts and odd multipliers modulo 2⁶³), so distinct ranks never
    /// share a key and keys are never negative.
    public static func key(forRank rank: Int) -> Int {
        let mask: UInt64 = (1 << 63) - 1
        var z = UInt64(rank) & mask
        z = ((z ^ (z >> 31)) &* 0x7FB5_D329_728E_A185) & mask
        z = ((z ^ (z >> 27)) &* 0x41C6_4E6D_A3BC_0075) & mask
        z = z ^ (z >> 33)
        return Int(z)
    }
}
