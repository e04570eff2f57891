import Dispatch
import Foundation
import Synchronization

/// How long one cache line takes to go from the first CPU to the second and
/// back (ns): two pinned threads hand a counter back and forth.
///
/// On a shared VM this moves while a benchmark runs. The 2-vCPU machine the
/// README's figures come from measured about 100 ns for stretches of seconds
/// and about 450 ns for others (the host had put the two vCPUs in different
/// parts of the processor), and every 2-thread row over shared state, a
/// plain `Mutex<Dictionary>` included, lost about half its throughput in the
/// slow stretches while work that shares nothing did not. Rows that compare
/// 2 threads with 1 carry this figure so that a reader can tell the two apart.
func cacheLineRoundTrip(handOffs: Int = 20_000) -> Double {
    let turn = Atomic<Int>(0)
    let start = ContinuousClock.now
    DispatchQueue.concurrentPerform(iterations: 2) { thread in
        setAffinity(cpu: thread % ProcessInfo.processInfo.activeProcessorCount)
        for k in 0..<handOffs {
            let mine = 2 * k + thread
            while turn.load(ordering: .acquiring) != mine {}
            turn.store(mine + 1, ordering: .releasing)
        }
        setAffinity(cpu: nil)
    }
    let elapsed = ContinuousClock.now - start
    let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    return nanoseconds / Double(handOffs)
}
