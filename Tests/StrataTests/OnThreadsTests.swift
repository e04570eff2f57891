import Foundation
import StrataTestSupport
import Synchronization
import Testing

/// ``onThreads(_:_:)``, which runs a stress test's threads off the cooperative pool.
@Suite struct OnThreadsTests {
    /// Every body runs at once, each on a thread of its own: four bodies
    /// meet before any returns (on the two threads of a pool they could not).
    @Test func onThreadsRunsTheBodiesAtOnce() async {
        let arrived = Atomic<Int>(0), met = Atomic<Int>(0)
        await onThreads(4) { _ in
            arrived.add(1, ordering: .sequentiallyConsistent)
            let deadline = ContinuousClock.now + .seconds(60)
            while arrived.load(ordering: .sequentiallyConsistent) < 4, ContinuousClock.now < deadline { usleep(1_000) }
            if arrived.load(ordering: .sequentiallyConsistent) == 4 { met.add(1, ordering: .relaxed) }
        }
        #expect(met.load(ordering: .relaxed) == 4)
    }
}
