import Dispatch
import Foundation
import Synchronization

/// How long one cache line takes to go from the first CPU to the second and
/// back (ns): two threads, each pinned to its CPU, hand a counter back and
/// forth.
///
/// On a shared VM this moves while a benchmark runs. The 2-vCPU machine the
/// README's figures come from measured about 100 ns for stretches of seconds
/// and about 450 ns for others (the host had put the two vCPUs in different
/// parts of the processor), and every 2-thread row over shared state, a
/// plain `Mutex<Dictionary>` included, lost about half its throughput in the
/// slow stretches while work that shares nothing did not. Rows that compare
/// 2 threads with 1 carry this figure so that a reader can tell the two apart.
///
/// The two threads are its own (`DispatchQueue.concurrentPerform` may run
/// both iterations on one thread, and two spinning hand-offs on one thread
/// wait for ever). With one CPU there is nothing to measure: it returns 0.
/// A hand-off that takes over 2 seconds in all gives up: `.infinity`.
func cacheLineRoundTrip(handOffs: Int = 20_000) -> Double {
    guard ProcessInfo.processInfo.activeProcessorCount >= 2 else { return 0 }
    let shared = HandOff()
    let finished = DispatchSemaphore(value: 0)
    let start = ContinuousClock.now
    let deadline = start.advanced(by: .seconds(2))
    for cpu in 0..<2 {
        Thread {
            defer { finished.signal() }
            setAffinity(cpu: cpu)
            for k in 0..<handOffs {
                let mine = 2 * k + cpu
                var spins = 0
                while shared.turn.load(ordering: .acquiring) != mine {
                    spins &+= 1
                    if spins & 0xFFFF == 0, shared.abandoned.load(ordering: .relaxed) || ContinuousClock.now > deadline {
                        shared.abandoned.store(true, ordering: .relaxed)
                        return
                    }
                }
                shared.turn.store(mine + 1, ordering: .releasing)
            }
        }.start()
    }
    finished.wait()
    finished.wait()
    if shared.abandoned.load(ordering: .relaxed) { return .infinity }
    let elapsed = ContinuousClock.now - start
    let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    return nanoseconds / Double(handOffs)
}

/// The longest round trip at which the two CPUs count as near (they share
/// a cache): ~70–190 ns on this project's VM when near, ~420–670 ns when
/// far. A round or run measured above it is reported apart, and the
/// 2-thread targets are judged without it.
let nearRoundTrip = 250.0

/// The counter the two threads of ``cacheLineRoundTrip(handOffs:)`` pass.
final class HandOff: Sendable {
    let turn = Atomic<Int>(0)
    let abandoned = Atomic<Bool>(false)
}
