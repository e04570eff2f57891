import Foundation
@testable import StrataExplorer
import Testing

/// D4: every workload generator is statistically right.
@Suite struct KeyGeneratorTests {
    /// Hit ratio of an LRU of `capacity` entries fed the workload's requests
    /// in the order its workers claim them (round-robin).
    static func lruHitRatio(_ workload: Workload, capacity: Int, requests: Int) -> Double {
        var generators = workload.generators()
        var recency: [Int: Int] = [:]  // key → last use
        var hits = 0
        for n in 0..<requests {
            let key = generators[n % generators.count].index(forRequest: n)
            if recency[key] != nil { hits += 1 }
            recency[key] = n
            if recency.count > capacity, let oldest = recency.min(by: { $0.value < $1.value }) {
                recency.removeValue(forKey: oldest.key)
            }
        }
        return Double(hits) / Double(requests)
    }

    @Test(arguments: [(64, 200), (10, 1000), (100, 400)])
    func uniformOnAnLRUHitsCapacityOverKeys(capacity: Int, keys: Int) {
        for seed: UInt64 in [1, 42, 0xDEAD_BEEF] {
            let workload = Workload(pattern: .uniform, keys: keys, rate: 5000, seconds: nil, seed: seed)
            #expect(workload.workerCount == 64)
            let ratio = Self.lruHitRatio(workload, capacity: capacity, requests: 40_000)
            let expected = Double(capacity) / Double(keys)
            #expect(abs(ratio - expected) < 0.03, "LRU \(capacity) over \(keys) keys (seed \(seed)): \(ratio), expected \(expected)")
        }
    }

    @Test func uniformCoversEveryKeyEvenly() {
        var generators = Workload(pattern: .uniform, keys: 50, rate: 500, seconds: nil, seed: 7).generators()
        var counts = Array(repeating: 0, count: 50)
        for n in 0..<100_000 { counts[generators[n % generators.count].index(forRequest: n)] += 1 }
        // Chi-square with 49 degrees of freedom: 99.9% quantile ≈ 85.4.
        let expected = 100_000.0 / 50
        let chiSquare = counts.reduce(0.0) { $0 + pow(Double($1) - expected, 2) / expected }
        #expect(chiSquare < 85.4, "chi-square \(chiSquare)")
    }

    @Test func zipfFrequenciesFollowTheExponent() {
        let keys = 1000
        var generators = Workload(pattern: .zipf, keys: keys, rate: 3200, seconds: nil, seed: 3).generators()
        var counts = Array(repeating: 0, count: keys)
        let samples = 400_000
        for n in 0..<samples { counts[generators[n % generators.count].index(forRequest: n)] += 1 }
        let s = KeyGenerator.zipfExponent
        let harmonic = (1...keys).reduce(0.0) { $0 + pow(Double($1), -s) }
        for rank in [1, 2, 3, 10, 100] {
            let expected = pow(Double(rank), -s) / harmonic
            let observed = Double(counts[rank - 1]) / Double(samples)
            #expect(abs(observed - expected) / expected < 0.08, "rank \(rank): \(observed), expected \(expected)")
        }
        // The exponent, fitted over ranks 1-100 (log-log slope).
        let points = (1...100).map { (log(Double($0)), log(Double(max(1, counts[$0 - 1])))) }
        let meanX = points.map(\.0).reduce(0, +) / 100, meanY = points.map(\.1).reduce(0, +) / 100
        let slope = points.reduce(0.0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) }
            / points.reduce(0.0) { $0 + pow($1.0 - meanX, 2) }
        #expect(abs(-slope - s) < 0.05, "fitted exponent \(-slope)")
    }

    @Test func loopVisitsKeysInOrder() {
        var generators = Workload(pattern: .loop, keys: 5, rate: 100, seconds: nil, seed: 1).generators()
        #expect((0..<12).map { generators[0].index(forRequest: $0) } == [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1])
    }

    @Test func workersDrawIndependentStreams() {
        var generators = Workload(pattern: .uniform, keys: 1 << 30, rate: 5000, seconds: nil, seed: 200).generators()
        let streams = generators.indices.map { w in (0..<8).map { _ in generators[w].index(forRequest: 0) } }
        // No worker's stream is another's shifted by a few steps.
        for a in streams.indices {
            for b in streams.indices where a != b {
                for shift in 1..<4 { #expect(Array(streams[a].dropFirst(shift)) != Array(streams[b].prefix(8 - shift))) }
            }
        }
    }
}
