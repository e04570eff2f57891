import Foundation
import Strata
import Synchronization

/// A background workload: `rate` gets per second over `keys` keys, from up to
/// 64 concurrent workers (so a slow origin does not throttle it), until
/// stopped or `seconds` have passed. Each worker claims a sequence number and
/// waits for that request's scheduled time, so the rate holds whatever the
/// latency of each get; `seconds` is a time limit, so a workload the pipeline
/// cannot keep up with still ends on time. Each worker draws its keys from
/// its own independently seeded generator.
public final class Workload: Sendable {
    public let pattern: LoadPattern
    public let keys: Int
    public let rate: Int
    public let seconds: Double?
    public let seed: UInt64
    /// When the workload began sending (its time limit counts from here).
    public var started: ContinuousClock.Instant { startedAt.withLock { $0 } }
    private let startedAt = Mutex(ContinuousClock.now)
    private let sequence = Atomic<Int>(0)
    private let completedCount = Atomic<Int>(0)
    private let background = BackgroundLoad()
    private var gate: WorkloadGate { background.gate }

    /// `seed`: the same seed replays the same keys per worker (default: random).
    public init(pattern: LoadPattern, keys: Int, rate: Int, seconds: Double?, seed: UInt64? = nil) {
        self.pattern = pattern
        self.keys = keys
        self.rate = rate
        self.seconds = seconds
        self.seed = seed ?? UInt64.random(in: 0...UInt64.max)
    }

    /// Gets issued and finished so far.
    public var completed: Int { completedCount.load(ordering: .relaxed) }

    /// Gets finished per second since the workload began (`nil` in its first second).
    public var achievedRate: Double? {
        let elapsed = elapsedSeconds
        return elapsed >= 1 ? Double(completed) / elapsed : nil
    }

    /// The pattern, the keys and the rate: the rate achieved, with the one
    /// asked for beside it when the pipeline cannot keep up (under 90% of it).
    public var description: String {
        var text = "load \(pattern.rawValue) \(keys) keys "
        if let achieved = achievedRate, achieved < 0.9 * Double(rate) {
            text += "\(Int(achieved.rounded()))/s (asked \(rate)/s)"
        } else {
            text += "\(rate)/s"
        }
        if let seconds {
            let left = max(0, seconds - elapsedSeconds)
            text += String(format: " (%.0fs left)", left.rounded(.up))
        }
        return text
    }

    var elapsedSeconds: Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    var workerCount: Int { min(64, max(1, rate / 50)) }

    /// One generator per worker, seeded from consecutive outputs of one
    /// SplitMix64: independent streams, not shifted copies of one.
    func generators() -> [KeyGenerator] {
        var seeds = SplitMix64(seed: seed)
        return (0..<workerCount).map { _ in KeyGenerator(pattern: pattern, keys: keys, seeds: &seeds) }
    }

    /// Starts issuing gets against `cache`; `onFinish` runs when it ends by itself.
    /// `sample(n, key)` sees each request first and returns true when it
    /// made the get itself (to log it); otherwise the workload makes it.
    public func start(on cache: BasicCache<String, Data>,
                      sample: (@Sendable (_ n: Int, _ key: String) async -> Bool)? = nil,
                      onFinish: @escaping @Sendable () -> Void) {
        start(request: { n, key in
            if let sample, await sample(n, key) { return }  // sampled: the get was made (and logged) by `sample`
            _ = try? await cache.getIfPresent(key)
        }, onFinish: onFinish)
    }

    /// Starts sending requests: `request(n, key)` makes request `n` for
    /// `key` (to one pipeline, or in turn to each of those compared: one
    /// generator, so every pipeline sees the same keys); `onFinish` runs when
    /// the workload ends by itself.
    public func start(request: @escaping @Sendable (_ n: Int, _ key: String) async -> Void,
                      onFinish: @escaping @Sendable () -> Void) {
        let streams = generators()
        background.start {
            self.startedAt.withLock { $0 = .now }
            await withTaskGroup(of: Void.self) { group in
                for generator in streams {
                    group.addTask { await self.run(generator, request: request) }
                }
            }
            if !Task.isCancelled { onFinish() }
        }
    }

    public func stop() { background.stop() }

    /// Waits until the workload has ended (stopped or finished).
    public func finished() async { await background.finished() }

    /// Holds new gets back, waits (at most `timeout`) for those in flight,
    /// runs `body`, and lets the workload go on: counters reset in `body`
    /// never see a get counted on one side of the reset and answered on the other.
    public func quiesce(timeout: Duration = .seconds(2), _ body: () -> Void) async {
        await background.quiesce(timeout: timeout, body)
    }

    private func run(_ generator: KeyGenerator, request: @Sendable (Int, String) async -> Void) async {
        var generator = generator
        let interval = 1.0 / Double(rate)
        while !Task.isCancelled {
            // A time limit: past it, requests still due are not sent.
            if let seconds, elapsedSeconds >= seconds { return }
            let n = sequence.add(1, ordering: .relaxed).newValue - 1
            let due = Double(n) * interval
            if let seconds, due >= seconds { return }
            let wait = due - elapsedSeconds
            if wait > 0.001 {
                do { try await Task.sleep(for: .nanoseconds(Int64(wait * 1e9))) } catch { return }
            } else if n % 16 == 0 {
                // Behind: a get answered without suspending (a memory hit, an
                // origin without latency) never gives the thread up, so the
                // back-fills and the other workers would wait for the end.
                await Task.yield()
            }
            let key = "key:\(generator.index(forRequest: n))"
            guard await gate.enter() else { return }
            await request(n, key)
            gate.leave()
            completedCount.add(1, ordering: .relaxed)
        }
    }
}
