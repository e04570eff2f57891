import Strata
import StrataSim
import Testing

@Suite struct LRUPolicyTests {
    /// A plain list-based LRU, as the oracle for the memory level's order.
    func oracleHits(_ trace: Trace, capacity: Int) -> Int {
        var order: [Int] = []  // most recent last
        var sizeOf: [Int: Int] = [:]
        var used = 0, hits = 0
        for (i, key) in trace.keys.enumerated() {
            let size = trace.sizes?[i] ?? 1
            if let position = order.firstIndex(of: key) {
                hits += 1
                order.append(order.remove(at: position))
                continue
            }
            guard size <= capacity else { continue }
            order.append(key)
            sizeOf[key] = size
            used += size
            while used > capacity { used -= sizeOf.removeValue(forKey: order.removeFirst())! }
        }
        return hits
    }

    @Test func matchesAListLRUWithAndWithoutSizes() {
        var generator = SeededGenerator(seed: 11)
        let keys = (0..<4000).map { _ in Int(generator.next() % 300) }
        let sizes = keys.map { 1 + ($0 * 37) % 90 }
        for capacity in [1, 7, 50, 200] {
            let unit = Trace(name: "unit", keys: keys)
            #expect(hits(.lru, unit, size: capacity) == oracleHits(unit, capacity: capacity), "capacity \(capacity)")
        }
        for capacity in [100, 1000, 5000] {
            let sized = Trace(name: "sized", keys: keys, sizes: sizes)
            #expect(hits(.lru, sized, size: capacity) == oracleHits(sized, capacity: capacity), "bytes \(capacity)")
        }
    }

    @Test func drivesTheRealMemoryLevel() {
        let policy = MemoryLevelPolicy(.lru, capacity: 3, sized: false)
        for key in [1, 2, 3, 4] { #expect(!policy.access(key: key, size: 1)) }
        #expect(policy.level.count == 3)
        #expect(policy.level.evictions == 1)
        #expect(policy.level.keysByRecency().map(\.key) == [4, 3, 2])
        #expect(policy.access(key: 2, size: 1))
        #expect(policy.level.keysByRecency().map(\.key) == [2, 4, 3])
    }

    @Test func objectLargerThanTheCacheIsNotAdmitted() {
        let policy = MemoryLevelPolicy(.lru, capacity: 100, sized: true)
        #expect(!policy.access(key: 1, size: 101))
        #expect(!policy.access(key: 1, size: 101))
        #expect(policy.level.count == 0)
    }

    /// Same seed, same numbers: the single-threaded replay is deterministic.
    @Test func deterministic() {
        let workload = Workload.scan(items: 20_000, theta: 0.9, scanLength: 500, requests: 100_000)
        let simulator = Simulator(policies: [.lru, .optimal], sizes: [300, 3000])
        let first = simulator.run(workload.trace(seed: 9))
        let second = simulator.run(workload.trace(seed: 9))
        #expect(first == second)
    }
}
