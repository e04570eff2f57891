import Synchronization

/// One operation observed by an ``InstrumentedCache``.
public struct CacheEvent: Sendable, Equatable, CustomStringConvertible {
    public enum Outcome: String, Sendable, Equatable {
        case hit, miss, error, stored, removed, cleared, memoryWarning
    }

    public let level: String
    public let operation: CacheOperation
    public let outcome: Outcome
    /// A printable, length-limited key (empty for clear and memory warnings).
    public let key: String
    public let duration: Duration
    /// `true` for the write-back of a value found in a lower level.
    public let isBackfill: Bool
    /// The error's description when `outcome == .error`.
    public let error: String?

    public init(level: String, operation: CacheOperation, outcome: Outcome, key: String,
                duration: Duration, isBackfill: Bool, error: String?) {
        self.level = level
        self.operation = operation
        self.outcome = outcome
        self.key = key
        self.duration = duration
        self.isBackfill = isBackfill
        self.error = error
    }

    public var description: String {
        let ms = Double(duration.nanoseconds) / 1e6
        var text = "\(level) \(isBackfill ? "back-fill" : operation.rawValue) \(key) \(outcome.rawValue)"
        text += ms >= 1 ? String(format: " %.1f ms", ms) : String(format: " %.0f µs", ms * 1000)
        if let error { text += ": \(error)" }
        return text
    }
}

/// The path of one request through instrumented levels, collected when a
/// caller runs the request inside `CacheContext.$trace.withValue(trace)`.
/// Back-fills started by the request append to the same trace.
public final class RequestTrace: Sendable {
    private struct Waiter {
        let id: UInt64
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var events: [CacheEvent] = []
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    public func append(_ event: CacheEvent) {
        let ready = state.withLock { state -> [Waiter] in
            state.events.append(event)
            let count = state.events.count
            let ready = state.waiters.filter { $0.count <= count }
            state.waiters.removeAll { $0.count <= count }
            return ready
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// The events so far, in the order they finished.
    public var events: [CacheEvent] { state.withLock { $0.events } }

    /// Runs `body` with this trace attached to every instrumented level it reaches.
    public func record<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        try await CacheContext.$trace.withValue(self) { try await body() }
    }

    /// Returns once the trace holds at least `count` events, or after `timeout`
    /// (back-fills finish after the get returns; this waits for them).
    public func waitForEvents(count: Int, timeout: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = state.withLock { state -> UInt64? in
                if state.events.count >= count { return nil }
                state.nextID += 1
                state.waiters.append(Waiter(id: state.nextID, count: count, continuation: continuation))
                return state.nextID
            }
            guard let id else { continuation.resume(); return }
            Task {
                try? await Task.sleep(for: timeout)
                let expired = self.state.withLock { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                expired?.continuation.resume()
            }
        }
    }
}
