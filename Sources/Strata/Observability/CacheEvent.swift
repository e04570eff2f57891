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
    private let steps = Mutex<[CacheEvent]>([])

    public init() {}

    public func append(_ event: CacheEvent) { steps.withLock { $0.append(event) } }

    /// The events so far, in the order they finished.
    public var events: [CacheEvent] { steps.withLock { $0 } }

    /// Runs `body` with this trace attached to every instrumented level it reaches.
    public func record<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        try await CacheContext.$trace.withValue(self) { try await body() }
    }
}
