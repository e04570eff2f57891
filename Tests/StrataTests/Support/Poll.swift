import Foundation

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
/// For waiting on another task's progress where no await is available. The
/// default is long: at the start of a loaded CI run every suite starts at
/// once and the pool stalled for 20 s (a 5 s wait for a get to reach its
/// origin failed); a condition that holds returns at once anyway. Waits that
/// expect nothing to happen give their own, short, timeout.
func poll(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        await Task.yield()
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// ``poll(timeout:_:)`` for a condition that awaits.
func poll(timeout: Duration = .seconds(30), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        await Task.yield()
        try? await Task.sleep(for: .milliseconds(1))
    }
    return await condition()
}
