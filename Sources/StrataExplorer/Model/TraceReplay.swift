import Foundation
import Strata
import StrataSim
import Synchronization

/// A trace replayed as the workload (`replay FILE [SPEED]`, `load trace FILE
/// [RATE]`, `strata run --replay`): its requests in order, one at a time,
/// each sent at its offset from the first divided by `speed` (a request
/// whose time has passed goes at once; `speed` nil: none waits). One at a
/// time, so a replay against a deterministic pipeline repeats its counters;
/// a slow level slows it down, and the title shows how far behind it is.
public final class TraceReplay: Sendable {
    /// What the title calls it: `replay NAME` or `load trace NAME`.
    public let label: String
    public let requests: [RecordedRequest]
    /// The multiplier of the trace's pace; nil: as fast as possible.
    public let speed: Double?
    private let startedAt = Mutex(ContinuousClock.now)
    private let doneCount = Atomic<Int>(0)
    private let failedCount = Atomic<Int>(0)
    /// How far behind its schedule the last request went, in milliseconds.
    private let lagMilliseconds = Atomic<Int>(0)
    private let background = BackgroundLoad()
    /// How long each replayed get took through the whole pipeline (its back-fills not waited for).
    public let getLatency = LatencyHistogram()

    public init(label: String, requests: [RecordedRequest], speed: Double?) {
        self.label = label
        self.requests = requests
        self.speed = speed
    }

    /// Requests sent and answered so far.
    public var completed: Int { doneCount.load(ordering: .relaxed) }
    /// Requests that failed (a level's error, a `clear` of a level the pipeline lacks).
    public var failed: Int { failedCount.load(ordering: .relaxed) }

    var elapsedSeconds: Double {
        let elapsed = ContinuousClock.now - startedAt.withLock { $0 }
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `replay t.trace 1200/5000 24% ×2`, then `· 3s behind`, `· 2 failed` when so.
    public var description: String {
        let done = completed
        let percent = requests.isEmpty ? 100 : done * 100 / requests.count
        var text = "\(label) \(done)/\(requests.count) \(percent)% "
        text += speed.map { "×" + String(format: "%g", $0) } ?? "max"
        let lag = lagMilliseconds.load(ordering: .relaxed)
        if lag >= 1000 { text += String(format: " · %.0fs behind", Double(lag) / 1000) }
        let failures = failed
        if failures > 0 { text += " · \(failures) failed" }
        return text
    }

    /// Starts sending; `perform` makes one request and returns false when it
    /// failed; `onFinish` runs when the last request is answered (not on ``stop()``).
    public func start(perform: @escaping @Sendable (RecordedRequest.Operation) async -> Bool,
                      onFinish: @escaping @Sendable () -> Void) {
        background.start {
            self.startedAt.withLock { $0 = .now }
            let first = self.requests.first?.offsetMicroseconds ?? 0
            for request in self.requests {
                if Task.isCancelled { return }
                if let speed = self.speed {
                    let due = Double(request.offsetMicroseconds - first) / 1e6 / speed
                    let wait = due - self.elapsedSeconds
                    if wait > 0.001 {
                        do { try await Task.sleep(for: .nanoseconds(Int64(wait * 1e9))) } catch { return }
                    }
                    self.lagMilliseconds.store(Int(max(0, -wait) * 1000), ordering: .relaxed)
                }
                guard await self.background.gate.enter() else { return }
                let ok = await perform(request.operation)
                self.background.gate.leave()
                if !ok { self.failedCount.add(1, ordering: .relaxed) }
                self.doneCount.add(1, ordering: .relaxed)
            }
            if !Task.isCancelled { onFinish() }
        }
    }

    public func stop() { background.stop() }

    /// Waits until the replay has ended (stopped or finished).
    public func finished() async { await background.finished() }

    /// Holds the next request back, waits (at most `timeout`) for the one in
    /// flight, runs `body`, and goes on (for `reset`, as ``Workload/quiesce(timeout:_:)``).
    public func quiesce(timeout: Duration = .seconds(2), _ body: () -> Void) async {
        await background.quiesce(timeout: timeout, body)
    }
}
