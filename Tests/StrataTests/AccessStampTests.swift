import Foundation
@testable import Strata
import Synchronization
import StrataTestSupport
import Testing

/// The memory level's LRU order rests on its access stamps: a stamp taken
/// after another (in happens-before order, in any shard, on any thread) is
/// never smaller. (A bare `rdtsc` failed this: the CPU may read the counter
/// before an earlier load has completed.)
@Suite struct AccessStampTests {
    @Test func stampsHandedBetweenThreadsAndShardsNeverGoBackwards() async throws {
        // Two threads, each with its own shard, take turns through one
        // atomic: each stamps, checks its stamp against the one the other
        // published, and publishes its own.
        let last = Atomic<UInt64>(0)
        let backwards = Atomic<Int>(0)
        let turns = 50_000
        await onThreads(2) { thread in
            var shard = LRUShardState<Int, Int>()
            var mine = 0
            while mine < turns {
                let seen = last.load(ordering: .acquiring)
                guard seen & 1 == UInt64(thread) else { continue }  // the other's turn
                let stamp = shard.nextStamp()
                if stamp < seen >> 1 { backwards.add(1, ordering: .relaxed) }
                last.store((stamp << 1) | UInt64(1 - thread), ordering: .releasing)
                mine += 1
            }
        }
        #expect(backwards.load(ordering: .relaxed) == 0)
    }

    @Test func successiveStampsOfOneShardIncrease() {
        var state = LRUShardState<Int, Int>()
        var previous: UInt64 = 0
        for _ in 0..<10_000 {
            let stamp = state.nextStamp()
            #expect(stamp > previous)
            previous = stamp
        }
    }
}
