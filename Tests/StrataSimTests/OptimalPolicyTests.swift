import StrataSim
import Testing

@Suite struct OptimalPolicyTests {
    /// The most hits any policy (free to bypass or evict anything) can get, by
    /// exhaustive search with memoisation over (position, resident set).
    func bruteForceHits(_ keys: [Int], capacity: Int) -> Int {
        var memo: [Int: Int] = [:]
        func best(_ i: Int, _ resident: UInt32) -> Int {
            if i == keys.count { return 0 }
            let memoKey = i << 32 | Int(resident)
            if let known = memo[memoKey] { return known }
            let bit = UInt32(1) << UInt32(keys[i])
            var result: Int
            if resident & bit != 0 {
                result = 1 + best(i + 1, resident)
            } else {
                result = best(i + 1, resident)  // bypass
                if resident.nonzeroBitCount < capacity {
                    result = max(result, best(i + 1, resident | bit))
                } else {
                    for victim in 0..<32 where resident & (1 << UInt32(victim)) != 0 {
                        result = max(result, best(i + 1, resident & ~(1 << UInt32(victim)) | bit))
                    }
                }
            }
            memo[memoKey] = result
            return result
        }
        return best(0, 0)
    }

    @Test func equalsBruteForceOnTinyTraces() {
        var generator = SeededGenerator(seed: 7)
        for round in 0..<150 {
            let distinct = 2 + round % 5
            let keys = (0..<14).map { _ in Int(generator.next() % UInt64(distinct)) }
            for capacity in 1...3 {
                let trace = Trace(name: "tiny", keys: keys)
                let optimal = hits(.optimal, trace, size: capacity)
                #expect(optimal == bruteForceHits(keys, capacity: capacity), "keys \(keys) capacity \(capacity)")
            }
        }
    }

    @Test func classicExample() {
        // Bélády on 7 0 1 2 0 3 0 4 2 3 0 3 2 with 3 frames (the textbook
        // reference string): 6 hits when every miss is admitted; 7 here, since
        // the policy may decline 4 (never requested again), as a cache with
        // admission may.
        let trace = Trace(name: "textbook", keys: [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2])
        #expect(hits(.optimal, trace, size: 3) == 7)
    }

    @Test func neverBelowLRU() throws {
        var traces = [
            Workload.zipf(items: 2000, theta: 0.8, requests: 20_000).trace(seed: 1),
            Workload.loop(keys: 300, requests: 5000).trace(seed: 1),
            Workload.scan(items: 1000, theta: 0.9, scanLength: 200, requests: 10_000).trace(seed: 3),
        ]
        traces.append(try SharedTraces.load("ps"))
        for trace in traces {
            for size in [10, 100, 250, 1000] {
                let results = Simulator(policies: [.lru, .optimal], sizes: [size]).run(trace)
                #expect(results[1].hits >= results[0].hits, "\(trace.name) @ \(size): \(results)")
            }
        }
    }

    @Test func loopIsLRUsWorstCase() {
        // A loop one larger than the cache: LRU never hits; Bélády keeps all but one slot.
        let trace = Workload.loop(keys: 11, requests: 1100).trace(seed: 0)
        let results = Simulator(policies: [.lru, .optimal], sizes: [10]).run(trace)
        #expect(results[0].hits == 0)
        #expect(results[1].hits > 900)
    }

    @Test func sizedNeverExceedsCapacityAndBypassesGiants() {
        let trace = Trace(name: "sized", keys: [1, 2, 3, 1, 2, 3, 4, 4], sizes: [60, 50, 200, 60, 50, 200, 10, 10])
        // Capacity 100 holds 1 (60) or 2 (50), not both; 3 never fits; 4 fits beside either.
        let optimal = hits(.optimal, trace, size: 100)
        let lru = hits(.lru, trace, size: 100)
        #expect(optimal == 2)  // one of 1 or 2, then 4
        #expect(lru <= optimal)
    }
}
