import Foundation
import StrataSim
import Testing

/// The `lru` column against libCacheSim's LRU (every object size 1), within
/// 0.3 points, and `adaptive` against the best of LRU and W-TinyLFU. The
/// README's `strata sim` run covers every size; here each trace is replayed at
/// the table's sizes only, to keep debug runs short.
@Suite struct ReferenceHitRatioTests {
    @Test(arguments: [
        ("multi1", 1000, 48.2),
        ("multi2", 1000, 47.8),
        ("multi2", 2000, 49.0),
        ("ps", 1000, 48.6),
        ("sprite", 1000, 90.6),
    ])
    func lruMatchesLibCacheSim(trace name: String, size: Int, expected: Double) async throws {
        let trace = try SharedTraces.load(name)
        let lru = await percentOffThePool(.lru, trace, size: size)
        #expect(abs(lru - expected) <= 0.3, "\(name) @ \(size): lru \(lru)%, libCacheSim \(expected)%")
    }

    /// `.adaptive` against max(LRU, W-TinyLFU with a fixed 1% window) − 1
    /// point, libCacheSim's columns, held hard with 0.5 point of slack. The
    /// sketch hashes Swift's per-process seeded `hashValue`, so a row moves
    /// from process to process: across 30 runs of `strata sim` (release
    /// build) multi1 67.75–68.07, multi2 @ 1000 57.46–57.96, @ 2000
    /// 70.02–70.12, ps 66.29–66.34, sprite @ 500 78.22–78.71, @ 1000
    /// 89.63–89.75.
    @Test(arguments: [
        ("multi1", 1000, 48.2, 68.7, 0.5),
        ("multi2", 1000, 47.8, 56.9, 0.5),
        ("multi2", 2000, 49.0, 70.5, 0.5),
        ("ps", 1000, 48.6, 66.8, 0.5),
        ("sprite", 500, 78.3, 69.4, 0.5),
        ("sprite", 1000, 90.6, 80.3, 0.5),
    ])
    func adaptiveKeepsTheBestOfLRUAndTinyLFU(trace name: String, size: Int, lru: Double, tinyLFU: Double, slack: Double) async throws {
        let trace = try SharedTraces.load(name)
        let adaptive = await percentOffThePool(.adaptive, trace, size: size)
        let target = max(lru, tinyLFU) - 1
        #expect(adaptive >= target - slack, "\(name) @ \(size): adaptive \(adaptive)%, target \(target)%")
    }

    /// Issue #11's mark exactly, max(LRU, W-TinyLFU) − 1 with no slack, for
    /// one fixed hash seed: the real `strata sim` in a process whose hashing
    /// is deterministic (`SWIFT_DETERMINISTIC_HASHING=1`), so the figures are
    /// the same on every run (multi1 67.99, multi2 57.91 and 70.06, ps 66.32,
    /// sprite 78.31 and 89.73). The test above covers other seeds.
    @Test func adaptiveMeetsTheMarkUnderAFixedSeed() throws {
        let marks: [String: Double] = [
            "multi1,1000": 68.7 - 1, "multi2,1000": 56.9 - 1, "multi2,2000": 70.5 - 1,
            "ps,1000": 66.8 - 1, "sprite,500": 78.3 - 1, "sprite,1000": 90.6 - 1,
        ]
        let traces = ["multi1", "multi2", "ps", "sprite"].map(SharedTraces.path)
        let run = try runStrataSim(["--sizes", "500,1000,2000", "--policies", "adaptive", "--csv"] + traces,
                                   environment: ["SWIFT_DETERMINISTIC_HASHING": "1"])
        #expect(run.status == 0, "\(run.stderr)")
        var checked = 0
        for line in run.stdout.split(separator: "\n").dropFirst() {
            // trace,requests,size,unit,policy,hits,hit_ratio
            let fields = line.split(separator: ",").map(String.init)
            guard fields.count == 7, let mark = marks["\(fields[0]),\(fields[2])"], let ratio = Double(fields[6]) else { continue }
            #expect(ratio * 100 >= mark, "\(fields[0]) @ \(fields[2]): adaptive \(ratio * 100)%, mark \(mark)%")
            checked += 1
        }
        #expect(checked == marks.count, "\(run.stdout)")
    }

    @Test func traceLengths() throws {
        for (name, requests) in [("multi1", 15_858), ("multi2", 26_311), ("sprite", 133_996), ("ps", 10_448)] {
            #expect(try SharedTraces.load(name).count == requests, "\(name)")
        }
    }

    /// libCacheSim's Zipf rows depend on its generator, so they are pinned
    /// loosely. Replaying 1M requests takes most of a minute in a debug build,
    /// so this runs only with `STRATA_LONG_TESTS=1` (the README's `strata sim`
    /// run covers the rows); `zipfSample` below always runs.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["STRATA_LONG_TESTS"] == "1"))
    func zipfNearLibCacheSim() {
        let trace = Workload.zipf(items: 100_000, theta: 0.99, requests: 1_000_000).trace(seed: 42)
        let results = Simulator(policies: [.lru, .adaptive], sizes: [1000, 10_000]).run(trace)
        let small = results[0].hitRatio * 100, large = results[2].hitRatio * 100
        #expect(abs(small - 48.9) <= 1.5, "zipf @ 1000: \(small)%")
        #expect(abs(large - 72.3) <= 1.5, "zipf @ 10000: \(large)%")
        let adaptiveSmall = results[1].hitRatio * 100, adaptiveLarge = results[3].hitRatio * 100
        #expect(adaptiveSmall >= 58.8 - 1.5, "zipf @ 1000: adaptive \(adaptiveSmall)%")  // 58.4 seen
        #expect(adaptiveLarge >= 77.1 - 1.5, "zipf @ 10000: adaptive \(adaptiveLarge)%")  // 77.5 seen
    }

    /// The first 250,000 requests of the Zipf row at 1,000: W-TinyLFU gains
    /// 10 points over LRU on the whole row; `.adaptive` gains 9.0 to 9.2 here
    /// across processes (LRU 49.05%, adaptive 58.1–58.2%), so at least 8 is
    /// required.
    @Test func zipfSample() async {
        let trace = Workload.zipf(items: 100_000, theta: 0.99, requests: 250_000).trace(seed: 42)
        let lru = await percentOffThePool(.lru, trace, size: 1000)
        let adaptive = await percentOffThePool(.adaptive, trace, size: 1000)
        #expect(adaptive >= lru + 8, "zipf sample @ 1000: lru \(lru)%, adaptive \(adaptive)%")
    }
}
