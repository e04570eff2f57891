import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// A checked delete (of an expired, corrupt or evicted entry) that finds it
/// moved another process's newer version aside puts that version back. A
/// remove or clear by that process meanwhile must still win: its value must
/// not come back.
@Suite struct DiskCheckedDeleteRaceTests {
    @Test func aRemoveByAnotherProcessDuringACheckedDeleteIsNotUndone() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock(SystemClock().now())
        let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000, clock: clock)
        try await disk.set(Data("old".utf8), forKey: "k", ttl: .seconds(10))
        clock.advance(by: .seconds(11))  // expired here; not for the other process's system clock
        let remover = Mutex<Process?>(nil)
        disk.duringCheckedDelete = { _, step in
            switch step {
            case .checked:
                // Another process stores a newer value after the check...
                #expect(runWorker(dir, "set", "k", "new").terminationStatus == 0)
            case .movedAside:
                // ...and removes it while it is moved aside.
                let process = startWorker(dir, "remove", "k")
                remover.withLock { $0 = process }
                #expect(waitUntilExitedOrBlockedOnALock(process), "the remover neither finished nor waited")
            }
        }
        #expect(try await disk.getIfPresent("k") == nil)  // expired: a checked delete
        disk.duringCheckedDelete = nil
        let process = try #require(remover.withLock { $0 })
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(try await disk.getIfPresent("k") == nil, "a value removed by another process came back")
        let fresh = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 400_000)
        #expect(try await fresh.getIfPresent("k") == nil, "a value removed by another process came back")
    }
}

private func startWorker(_ dir: TemporaryDirectory, _ arguments: String...) -> Process {
    let process = Process()
    process.executableURL = productsDirectory.appendingPathComponent("StrataDiskWorker")
    process.arguments = [dir.path] + arguments
    try! process.run()
    return process
}

private func runWorker(_ dir: TemporaryDirectory, _ arguments: String...) -> Process {
    let process = Process()
    process.executableURL = productsDirectory.appendingPathComponent("StrataDiskWorker")
    process.arguments = [dir.path] + arguments
    try! process.run()
    process.waitUntilExit()
    return process
}

/// Polls (10 s at most) until `process` has exited or waits for a file lock
/// (a blocked request of its pid in `/proc/locks`).
private func waitUntilExitedOrBlockedOnALock(_ process: Process) -> Bool {
    let deadline = ContinuousClock.now + .seconds(10)
    let pid = " \(process.processIdentifier) "
    while ContinuousClock.now < deadline {
        if !process.isRunning { return true }
        let locks = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
        if locks.split(separator: "\n").contains(where: { $0.contains("->") && $0.contains(pid) }) { return true }
        usleep(1_000)
    }
    return false
}
