import Synchronization

/// One operation observed by an ``InstrumentedCache``.
public struct CacheEvent: Sendable, Equatable, CustomStringConvertible {
    /// How an operation ended.
    public enum Outcome: String, Sendable, Equatable {
        /// A get found a value.
        case hit
        /// A get found none.
        case miss
        /// The operation failed; ``CacheEvent/error`` says why.
        case error
        /// A set or a back-fill stored its value.
        case stored
        /// A remove ended.
        case removed
        /// A clear ended.
        case cleared
        /// The level handled a memory warning.
        case memoryWarning
        /// A back-fill the level turned down: it holds a newer value (``BackfillDeclined``).
        case declined
        /// Dropped because a level below reported a change made elsewhere
        /// (``CacheLevel/invalidate(_:)``): not a user's remove.
        case invalidated
        /// Answered with a last known value because the levels failed or
        /// were late (``ResilientCache``); `duration` is the value's age.
        case stale
        /// No answer within the hard timeout (``ResilientCache``).
        case timedOut
        /// A hit past the refresh-ahead fraction of its TTL started a
        /// background refresh of the key (``ResilientCache``).
        case refreshStarted
    }

    /// The name of the level observed (see ``CacheLevel/name``).
    public let level: String
    /// What the level was asked to do.
    public let operation: CacheOperation
    /// How it ended.
    public let outcome: Outcome
    /// A printable, length-limited key (empty for clear and memory warnings).
    public let key: String
    /// How long the operation took (for ``Outcome/stale``, the value's age).
    public let duration: Duration
    /// `true` for the write-back of a value found in a lower level.
    public let isBackfill: Bool
    /// The error's description when `outcome == .error`.
    public let error: String?
    /// Why a get missed (`outcome == .miss`) in a traced request
    /// (``RequestTrace``); `nil` otherwise. Exact for a request whose levels
    /// are asked one after another (a get through a composition); when one
    /// trace covers gets running at once (a batch), a note of expiry may be
    /// credited to another key of the same trace.
    public let missReason: MissReason?

    /// An event with these fields; levels make them, tests and custom levels may too.
    public init(level: String, operation: CacheOperation, outcome: Outcome, key: String,
                duration: Duration, isBackfill: Bool, error: String?, missReason: MissReason? = nil) {
        self.level = level
        self.operation = operation
        self.outcome = outcome
        self.key = key
        self.duration = duration
        self.isBackfill = isBackfill
        self.error = error
        self.missReason = missReason
    }

    /// One line: level, operation (or back-fill), key, outcome and duration in milliseconds.
    public var description: String {
        let ms = Double(duration.nanoseconds) / 1e6
        var text = "\(level) \(isBackfill ? "back-fill" : operation.rawValue) \(key) \(outcome.rawValue)"
        text += ms >= 1 ? String(format: " %.1f ms", ms) : String(format: " %.0f µs", ms * 1000)
        if let error { text += ": \(error)" }
        if missReason == .expired { text += " (expired)" }
        return text
    }
}
