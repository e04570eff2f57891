import Foundation
import Strata
import Synchronization

/// A background workload: `rate` gets per second over `keys` keys, from up to
/// 64 concurrent workers (so a slow origin does not throttle it), until
/// stopped or `seconds` have passed. Each worker claims a sequence number and
/// waits for that request's scheduled time, so the rate holds whatever the
/// latency of each get.
public final class Workload: Sendable {
    public let pattern: LoadPattern
    public let keys: Int
    public let rate: Int
    public let seconds: Double?
    public let started = ContinuousClock.now
    private let sequence = Atomic<Int>(0)
    private let completedCount = Atomic<Int>(0)
    private let task = Mutex<Task<Void, Never>?>(nil)

    public init(pattern: LoadPattern, keys: Int, rate: Int, seconds: Double?) {
        self.pattern = pattern
        self.keys = keys
        self.rate = rate
        self.seconds = seconds
    }

    /// Gets issued and finished so far.
    public var completed: Int { completedCount.load(ordering: .relaxed) }

    public var description: String {
        var text = "load \(pattern.rawValue) \(keys) keys \(rate)/s"
        if let seconds {
            let left = max(0, seconds - elapsedSeconds)
            text += String(format: " (%.0fs left)", left)
        }
        return text
    }

    var elapsedSeconds: Double {
        let elapsed = ContinuousClock.now - started
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Starts issuing gets against `cache`; `onFinish` runs when it ends by itself.
    public func start(on cache: BasicCache<String, Data>, onFinish: @escaping @Sendable () -> Void) {
        let workers = min(64, max(1, rate / 50))
        let handle = Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<workers {
                    group.addTask { await self.run(worker: worker, cache: cache) }
                }
            }
            if !Task.isCancelled { onFinish() }
        }
        task.withLock { $0 = handle }
    }

    public func stop() { task.withLock { $0 }?.cancel() }

    /// Waits until the workload has ended (stopped or finished).
    public func finished() async { await task.withLock { $0 }?.value }

    private func run(worker: Int, cache: BasicCache<String, Data>) async {
        var random = SplitMix64(seed: UInt64(worker) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(keys))
        let interval = 1.0 / Double(rate)
        while !Task.isCancelled {
            let n = sequence.add(1, ordering: .relaxed).newValue - 1
            let due = Double(n) * interval
            if let seconds, due >= seconds { return }
            let wait = due - elapsedSeconds
            if wait > 0.001 {
                do { try await Task.sleep(for: .nanoseconds(Int64(wait * 1e9))) } catch { return }
            }
            let key = "key:\(nextIndex(n, &random))"
            _ = try? await cache.getIfPresent(key)
            completedCount.add(1, ordering: .relaxed)
        }
    }

    func nextIndex(_ n: Int, _ random: inout SplitMix64) -> Int {
        switch pattern {
        case .loop: return n % keys
        case .uniform: return Int(random.next() % UInt64(keys))
        case .zipf: return Self.zipfIndex(unit: Double(random.next() >> 11) / Double(1 << 53), keys: keys)
        }
    }

    /// Inverse of the continuous Zipf CDF with s = 0.99: index 0 is the hottest.
    static func zipfIndex(unit: Double, keys: Int) -> Int {
        let s = 0.99
        let exponent = 1 - s
        let top = pow(Double(keys) + 1, exponent) - 1
        let x = pow(unit * top + 1, 1 / exponent)
        return min(max(Int(x) - 1, 0), keys - 1)
    }
}

/// A small, fast deterministic generator for workloads.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
