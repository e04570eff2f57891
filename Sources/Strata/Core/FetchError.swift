/// The outcomes of a get that are not failures of a level.
public enum FetchError: Error, Equatable, Hashable, Sendable {
    /// No level had a value for the key.
    case valueNotInCache
    /// A conditioned transformer declined its input. Levels turn it into a
    /// miss (`nil` from `getIfPresent`); callers of a level never see it.
    case conditionNotSatisfied

    /// `true` for both cases: a composition falls through to the next level.
    @inlinable
    public var isMiss: Bool { true }
}

/// What a level was asked to do when it failed.
public enum CacheOperation: String, Sendable, Equatable, Hashable {
    /// A read of a key.
    case get
    /// A set of a key, with or without a deadline.
    case set
    /// A remove of a key.
    case remove
    /// A clear of every key.
    case clear
    /// A key transformer turning a key into the inner level's (``KeyTransformedCache``).
    case transformKey
    /// A value transformer on the way out, turning a value read (``ValueTransformedCache``).
    case transformValue
    /// A value transformer on the way in, turning a value to store (``ValueTransformedCache``).
    case inverseTransformValue
    /// A level's condition deciding whether it takes part (``ConditionedCache``).
    case condition
}

/// One level's failure, naming the level and the key.
public struct LevelFailure: Error, Sendable, CustomStringConvertible {
    /// The name of the level that failed (see ``CacheLevel/name``).
    public let level: String
    /// What the level was asked to do.
    public let operation: CacheOperation
    /// A printable, length-limited form of the key.
    public let key: String
    /// The level's own error.
    public let underlying: any Error

    /// The failure of `level` at `operation` on `key`, caused by `underlying`.
    public init(level: String, operation: CacheOperation, key: some Sendable, underlying: any Error) {
        self.level = level
        self.operation = operation
        self.key = describeKey(key)
        self.underlying = underlying
    }

    /// One line: `<level>: <operation> <key> failed: <underlying error>`.
    public var description: String {
        "\(level): \(operation.rawValue) \(key) failed: \(underlying)"
    }
}

/// A get, set or remove of a composed cache failed in one or more levels.
///
/// For a get it is thrown only when no level had the value and at least one
/// level failed with a real error (all-miss throws ``FetchError/valueNotInCache``).
/// For a set or remove it names every level whose write failed.
public struct LevelsFailedError: Error, Sendable, CustomStringConvertible {
    /// What the levels were asked to do.
    public let operation: CacheOperation
    /// Each failing level, top of the pipeline first.
    public let failures: [LevelFailure]

    /// `operation` failed in each of `failures`, top level first.
    public init(operation: CacheOperation, failures: [LevelFailure]) {
        self.operation = operation
        self.failures = failures
    }

    /// Names of the failing levels, top first.
    public var failingLevels: [String] { failures.map(\.level) }

    /// One line: the operation, then each failure, top level first.
    public var description: String {
        "\(operation.rawValue) failed in \(failures.count) level(s): "
            + failures.map(\.description).joined(separator: "; ")
    }
}

/// A printable key for errors and logs, at most 120 characters, with control
/// characters escaped so binary keys cannot garble a terminal.
@usableFromInline
package func describeKey(_ key: some Sendable) -> String {
    var text = String(describing: key)
    if text.count > 120 { text = String(text.prefix(117)) + "..." }
    if text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
        text = String(text.unicodeScalars.map { scalar -> String in
            scalar.properties.generalCategory == .control
                ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined())
    }
    return text
}

extension Error {
    /// Flattens a ``LevelsFailedError`` into its failures, or wraps any other
    /// error as one failure of `level`.
    @usableFromInline
    func levelFailures(level: String, operation: CacheOperation, key: some Sendable) -> [LevelFailure] {
        if let many = self as? LevelsFailedError { return many.failures }
        if let one = self as? LevelFailure { return [one] }
        return [LevelFailure(level: level, operation: operation, key: key, underlying: self)]
    }
}
