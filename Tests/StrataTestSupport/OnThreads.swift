import Foundation
import Synchronization

/// Runs `body(0)`, …, `body(count - 1)` at once, each on a `Thread` of its
/// own, and returns when all have returned; the caller's task waits without
/// holding a thread.
///
/// For stress tests whose bodies are synchronous loops. Not
/// `DispatchQueue.concurrentPerform`: on Linux its iterations run on the
/// global root queue's workers, which are the threads of Swift's cooperative
/// pool (two here), so a stress test there stalls every task of the process
/// for as long as it runs (a Redis subscription in another suite timed out).
public func onThreads(_ count: Int, _ body: @Sendable (Int) -> Void) async {
    await withoutActuallyEscaping(body) { body in
        // The threads reach `body` through the box, emptied once they are all
        // done: a `Thread` keeps its block (and what it holds) a while after
        // it returns, and `body` must not outlive this call.
        let box = Mutex<(@Sendable (Int) -> Void)?>(body)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for index in 0..<count {
                group.enter()
                Thread {
                    run(box, index)
                    group.leave()
                }.start()
            }
            group.notify(queue: .global()) { continuation.resume() }
        }
        box.withLock { $0 = nil }
    }
}

/// Calls the body in `box`, releasing it before returning.
@inline(never)
private func run(_ box: borrowing Mutex<(@Sendable (Int) -> Void)?>, _ index: Int) {
    let body = box.withLock { $0 }
    body?(index)
}

/// ``onThreads(_:_:)`` with a different body per thread.
public func onThreads(_ bodies: [@Sendable () -> Void]) async {
    await onThreads(bodies.count) { bodies[$0]() }
}
