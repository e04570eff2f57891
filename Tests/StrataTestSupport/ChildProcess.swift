import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension Process {
    /// Waits for the child to exit, on a Dispatch thread (never blocking a
    /// cooperative one). A child still running after `limit` is killed
    /// (SIGKILL) and the answer is `false`: a test never waits for ever on a
    /// process that hangs (one did, and a CI run timed out with no clue).
    @discardableResult
    public func exit(within limit: Duration = .seconds(60)) async -> Bool {
        let watchdog = ChildWatchdog(self, limit: limit)
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                self.waitUntilExit()
                // Disarmed here, at once: later, a reaped child's pid may be another's.
                continuation.resume(returning: !watchdog.finish())
            }
        }
    }

    /// Kills the child (SIGKILL) if it still runs after `limit`, unless
    /// ``ChildWatchdog/finish()`` comes first. For waits other than
    /// ``exit(within:)``, such as reading a child's output to its end.
    public func watchdog(_ limit: Duration = .seconds(60)) -> ChildWatchdog { ChildWatchdog(self, limit: limit) }
}

/// Kills a child process that outlives its time limit.
public final class ChildWatchdog: Sendable {
    private let fired = Atomic<Int>(0)  // 0 armed, 1 fired, 2 finished
    private let pid: pid_t

    init(_ process: Process, limit: Duration) {
        pid = process.processIdentifier
        let (seconds, attoseconds) = limit.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            if fired.compareExchange(expected: 0, desired: 1, ordering: .relaxed).exchanged { kill(pid, SIGKILL) }
        }
    }

    /// Disarms it; `true` when it had already killed the child.
    public func finish() -> Bool {
        !fired.compareExchange(expected: 0, desired: 2, ordering: .relaxed).exchanged
    }
}

/// The lines a child process prints to `output`, as they come: read on a
/// thread of its own until the pipe closes.
public final class ChildLines: Sendable {
    private let lines = Mutex<[String]>([])

    public init(_ output: FileHandle) {
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = output.availableData
                if chunk.isEmpty { return }
                pending += chunk
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    lines.withLock { $0.append(line) }
                }
            }
        }
    }

    /// Every line so far, in order.
    public var all: [String] { lines.withLock { $0 } }
}
