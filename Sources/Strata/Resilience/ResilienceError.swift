/// Options of a ``ResilientCache`` that cannot be used. A loading get
/// refuses them (the cause of its `FetchError`), as it refuses a negative TTL.
public enum ResilienceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A refresh-ahead fraction that is not a number (numbers outside 0...1 are clamped).
    case invalidRefreshAhead(String)

    /// One line naming the rejected option.
    public var description: String {
        switch self {
        case .invalidRefreshAhead(let fraction): "invalid refresh-ahead fraction \(fraction): it must be a number (0 to 1)"
        }
    }
}
