/// Caps on what one reply may claim, checked before anything is allocated.
public struct RESPLimits: Sendable, Equatable {
    /// Longest bulk string, blob error or verbatim string; Redis' own
    /// `proto-max-bulk-len` default (512 MiB).
    public let maxBulkLength: Int
    /// Most elements in one array, set or push; a map or attribute of `n`
    /// pairs counts `2n`.
    public let maxAggregateCount: Int
    /// Deepest nesting of aggregates: a value inside 64 arrays is accepted
    /// with the default, inside 65 it is rejected.
    public let maxDepth: Int
    /// Longest simple line (`+`, `-`, `:`, `,`, `(` …) without its CRLF.
    public let maxLineLength: Int

    /// Caps of these sizes; the defaults are ``default``'s.
    ///
    /// - Precondition: every cap is positive and `maxDepth` is at most 1024
    ///   (values are released recursively).
    public init(maxBulkLength: Int = 512 * 1024 * 1024, maxAggregateCount: Int = 1 << 24, maxDepth: Int = 64,
                maxLineLength: Int = 64 * 1024) {
        precondition(maxBulkLength > 0 && maxAggregateCount > 0 && maxLineLength > 0, "RESP limits must be positive")
        precondition((1...1024).contains(maxDepth), "maxDepth must be within 1...1024")
        self.maxBulkLength = maxBulkLength
        self.maxAggregateCount = maxAggregateCount
        self.maxDepth = maxDepth
        self.maxLineLength = maxLineLength
    }

    /// The default caps: 512 MiB bulk strings (Redis' own limit), 2^24
    /// elements, depth 64, 64 KiB lines.
    public static let `default` = RESPLimits()
}
