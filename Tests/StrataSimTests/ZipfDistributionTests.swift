import Foundation
import StrataSim
import Testing

@Suite struct ZipfDistributionTests {
    /// Drawn frequencies follow 1/rank^theta: a chi-square test over the top
    /// ranks (plus one bin for the rest) and the fitted log-log slope.
    @Test(arguments: [0.5, 0.99, 1.2])
    func frequenciesFollowTheExponent(theta: Double) {
        let items = 1000, draws = 200_000
        let zipf = ZipfDistribution(items: items, theta: theta)
        var generator = SeededGenerator(seed: 2024)
        var counts = [Int](repeating: 0, count: items + 1)
        for _ in 0..<draws { counts[zipf.nextRank(using: &generator)] += 1 }

        // The probabilities themselves: proportional to rank^-theta, summing to 1.
        let total = (1...items).reduce(0.0) { $0 + zipf.probability(ofRank: $1) }
        #expect(abs(total - 1) < 1e-9)
        #expect(abs(zipf.probability(ofRank: 1) / zipf.probability(ofRank: 10) - pow(10, theta)) < 1e-6)

        // Chi-square over ranks 1...50 and the tail; 50 degrees of freedom,
        // so 90 is far past the 0.1% critical value (~86.7).
        var chiSquare = 0.0
        var tailExpected = Double(draws), tailObserved = draws
        for rank in 1...50 {
            let expected = zipf.probability(ofRank: rank) * Double(draws)
            chiSquare += pow(Double(counts[rank]) - expected, 2) / expected
            tailExpected -= expected
            tailObserved -= counts[rank]
        }
        chiSquare += pow(Double(tailObserved) - tailExpected, 2) / tailExpected
        #expect(chiSquare < 90, "theta \(theta): chi-square \(chiSquare)")

        // Least-squares slope of log(count) on log(rank) over ranks 1...100.
        let points = (1...100).map { (log(Double($0)), log(Double(max(counts[$0], 1)))) }
        let meanX = points.map(\.0).reduce(0, +) / 100, meanY = points.map(\.1).reduce(0, +) / 100
        let slope = points.reduce(0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) }
            / points.reduce(0) { $0 + ($1.0 - meanX) * ($1.0 - meanX) }
        #expect(abs(-slope - theta) < 0.05, "theta \(theta): fitted exponent \(-slope)")
    }

    @Test func inverseCDFEdges() {
        let zipf = ZipfDistribution(items: 5, theta: 1)
        #expect(zipf.rank(atUnit: 0) == 1)
        #expect(zipf.rank(atUnit: 0.999_999_999) == 5)
        #expect(ZipfDistribution(items: 1, theta: 0.99).rank(atUnit: 0.5) == 1)
        let uniform = ZipfDistribution(items: 4, theta: 0)
        #expect((1...4).allSatisfy { abs(uniform.probability(ofRank: $0) - 0.25) < 1e-12 })
    }

    @Test func keysAreScrambledAndDistinct() {
        let keys = (1...100_000).map(ZipfDistribution.key(forRank:))
        #expect(Set(keys).count == keys.count)
        #expect(keys.allSatisfy { $0 >= 0 })
        #expect(keys[0] != 1 && keys[1] != keys[0] + 1)
    }

    @Test func sameSeedSameRequestsOtherSeedOthers() {
        let workload = Workload.zipf(items: 10_000, theta: 0.99, requests: 50_000)
        #expect(workload.trace(seed: 5).keys == workload.trace(seed: 5).keys)
        #expect(workload.trace(seed: 5).keys != workload.trace(seed: 6).keys)
    }
}
