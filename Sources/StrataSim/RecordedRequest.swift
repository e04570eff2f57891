/// One request of a strata trace (`#strata-trace 1`, see docs/traces.md):
/// when it was made, relative to the start of the recording, and what it was.
public struct RecordedRequest: Sendable, Equatable {
    /// What a request did.
    public enum Operation: Sendable, Equatable, CustomStringConvertible {
        /// A read of `key`.
        case get(key: String)
        /// A write of `valueSize` bytes under `key` (the bytes are not recorded).
        case set(key: String, valueSize: Int)
        /// A removal of `key` from every level.
        case remove(key: String)
        /// Emptying one level (`level`) or every level (`nil`).
        case clear(level: String?)

        /// The operation as a trace line spells it after the offset: `set user%207 512`.
        public var description: String {
            switch self {
            case .get(let key): "get \(TraceKeyEscaping.escape(key))"
            case .set(let key, let size): "set \(TraceKeyEscaping.escape(key)) \(size)"
            case .remove(let key): "rm \(TraceKeyEscaping.escape(key))"
            case .clear(let level?): "clear \(TraceKeyEscaping.escape(level))"
            case .clear(nil): "clear"
            }
        }
    }

    /// Microseconds since the recording began; never less than the previous request's.
    public var offsetMicroseconds: Int
    public var operation: Operation

    /// A request made `offsetMicroseconds` after the recording began.
    public init(offsetMicroseconds: Int, _ operation: Operation) {
        self.offsetMicroseconds = offsetMicroseconds
        self.operation = operation
    }

    /// The key the request names (`nil` for a clear).
    public var key: String? {
        switch operation {
        case .get(let key), .set(let key, _), .remove(let key): key
        case .clear: nil
        }
    }
}
