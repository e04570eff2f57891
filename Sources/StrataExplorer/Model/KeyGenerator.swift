import Strata

/// The key indexes one workload worker requests.
struct KeyGenerator {
    let pattern: LoadPattern
    let keys: Int
    private var random: Xoshiro256StarStar
    private let zipf: ZipfSampler?

    /// The exponent of `zipf` workloads.
    static let zipfExponent = 0.99

    init(pattern: LoadPattern, keys: Int, seeds: inout SplitMix64) {
        self.pattern = pattern
        self.keys = keys
        random = Xoshiro256StarStar(seeds: &seeds)
        zipf = pattern == .zipf ? ZipfSampler(count: keys, exponent: Self.zipfExponent) : nil
    }

    /// The key index of request `n` (0 is the hottest zipf key).
    mutating func index(forRequest n: Int) -> Int {
        switch pattern {
        case .loop: return n % keys
        case .uniform: return Int.random(in: 0..<keys, using: &random)
        case .zipf:
            guard let zipf else { return 0 }
            return zipf.sample { random.nextUnit() } - 1
        }
    }
}
