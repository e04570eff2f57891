import Foundation

/// Exact Zipf ranks: P(k) ∝ 1/k^s for k in 1...n, by rejection-inversion
/// (Hörmann and Derflinger 1996, as in Apache Commons RNG): O(1) memory
/// and time per sample for any n, unlike the continuous approximation it
/// replaces, which gave rank 1 only 1.7x rank 2's share instead of 2^s.
struct ZipfSampler: Sendable {
    let count: Int
    let exponent: Double
    private let hIntegralX1: Double
    private let hIntegralN: Double
    private let squeeze: Double

    init(count: Int, exponent: Double) {
        precondition(count >= 1 && exponent > 0)
        self.count = count
        self.exponent = exponent
        hIntegralX1 = Self.hIntegral(1.5, exponent) - 1
        hIntegralN = Self.hIntegral(Double(count) + 0.5, exponent)
        squeeze = 2 - Self.hIntegralInverse(Self.hIntegral(2.5, exponent) - Self.h(2, exponent), exponent)
    }

    /// A rank from 1 (the most frequent) to `count`.
    func sample(_ unit: () -> Double) -> Int {
        while true {
            let u = hIntegralN + unit() * (hIntegralX1 - hIntegralN)
            let x = Self.hIntegralInverse(u, exponent)
            let k = min(max(Int(x + 0.5), 1), count)
            if Double(k) - x <= squeeze || u >= Self.hIntegral(Double(k) + 0.5, exponent) - Self.h(Double(k), exponent) {
                return k
            }
        }
    }

    static func h(_ x: Double, _ s: Double) -> Double { exp(-s * log(x)) }

    static func hIntegral(_ x: Double, _ s: Double) -> Double {
        let logX = log(x)
        return helper2((1 - s) * logX) * logX
    }

    static func hIntegralInverse(_ x: Double, _ s: Double) -> Double {
        let t = max(x * (1 - s), -1)
        return exp(helper1(t) * x)
    }

    /// log(1 + x) / x, accurate near 0.
    static func helper1(_ x: Double) -> Double {
        abs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }

    /// (exp(x) - 1) / x, accurate near 0.
    static func helper2(_ x: Double) -> Double {
        abs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x))
    }
}
