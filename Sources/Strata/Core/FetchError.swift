/// What every get throws when it ends without a value: the one error type
/// of ``CacheLevel/get(_:)``, the loading gets and `getAll`, whatever the
/// pipeline's shape (cancellation stays `CancellationError`).
///
/// It names the level asked, the key and why: no level had a value
/// (``Reason/valueNotInCache``), or levels failed (``Reason/levelsFailed``,
/// each in ``failures`` with its own error; ``cause(as:)`` finds one by type).
/// Match a reason as before: `catch FetchError.valueNotInCache`; two fetch
/// errors are equal when their reasons are (level, key and failures are
/// context).
public struct FetchError: Error, Hashable, Sendable {
    /// Why the get has no value.
    public enum Reason: Hashable, Sendable {
        /// No level had a value for the key.
        case valueNotInCache
        /// A conditioned transformer declined its input. Levels turn it into
        /// a miss (`nil` from `getIfPresent`); callers of a level never see it.
        case conditionNotSatisfied
        /// No level had a value and at least one failed, or the loader failed
        /// (see ``FetchError/failures``).
        case levelsFailed
    }

    /// Why the get has no value.
    public let reason: Reason
    /// The name of the level (or stack) the get asked, `""` when not known.
    public let level: String
    /// A printable, length-limited form of the key, `""` when not known.
    public let key: String
    /// For ``Reason/levelsFailed``: each failure, top of the pipeline first.
    public let failures: [LevelFailure]

    /// A fetch error for `reason`, naming `level` and `key` when given.
    public init(_ reason: Reason, level: String = "", key: (some Sendable)? = String?.none, failures: [LevelFailure] = []) {
        self.reason = reason
        self.level = level
        self.key = key.map { describeKey($0) } ?? ""
        self.failures = failures
    }

    /// No level had a value for the key (naming neither: for matching and for user levels).
    public static let valueNotInCache = FetchError(.valueNotInCache)
    /// A conditioned transformer declined its input (see ``Reason/conditionNotSatisfied``).
    public static let conditionNotSatisfied = FetchError(.conditionNotSatisfied)
    /// Levels failed (naming neither level nor key: for matching, `catch FetchError.levelsFailed`).
    public static let levelsFailed = FetchError(.levelsFailed)

    /// Whether this is a miss rather than a failure: a composition falls
    /// through to the next level, a closure level reads it as `nil`.
    @inlinable
    public var isMiss: Bool { reason != .levelsFailed }

    /// The first failure's own error of type `E`, looking through the errors
    /// levels wrap (a ``LevelFailure``, a ``LevelsFailedError``): typed access
    /// to what went wrong (`error.cause(as: DiskCacheError.self)`).
    public func cause<E: Error>(as type: E.Type) -> E? {
        for failure in failures { if let found = failure.cause(as: type) { return found } }
        return nil
    }

    /// Equal reasons (level, key and failures are context).
    public static func == (lhs: FetchError, rhs: FetchError) -> Bool { lhs.reason == rhs.reason }

    /// Hashes the reason only, as ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(reason) }

    /// Whether `error` is a fetch error with `pattern`'s reason:
    /// `catch FetchError.valueNotInCache` matches one naming any level and key.
    public static func ~= (pattern: FetchError, error: any Error) -> Bool {
        (error as? FetchError)?.reason == pattern.reason
    }

    /// Runs a get of `key` in `level` (a loading get's whole work), throwing
    /// what ``failed(_:key:in:)`` makes of its errors.
    /// The level's name is asked for only on failure (a composition builds it).
    static func getting<T>(_ key: some Sendable, in level: @autoclosure () -> String,
                           _ body: () async throws -> T) async throws -> T {
        do { return try await body() } catch { throw failed(error, key: key, in: level()) }
    }

    /// The miss of `key` in `level` (out of line: a get's hit path stays small).
    @usableFromInline @inline(never)
    static func notFound(_ key: some Sendable, in level: String) -> FetchError {
        FetchError(.valueNotInCache, level: level, key: key)
    }

    /// What a get of `key` in `level` throws for `error`, an error of the
    /// level's read: cancellation as it is; a fetch error of a get nested in
    /// it (a closure level's, a loader's) renamed to this get, a miss as a
    /// miss (a declined condition too), a failure with its failures; any
    /// other error as the failures it carries.
    @usableFromInline @inline(never)
    static func failed(_ error: any Error, key: some Sendable, in level: String) -> any Error {
        if error is CancellationError { return error }
        if let fetch = error as? FetchError {
            if fetch.isMiss { return FetchError(.valueNotInCache, level: level, key: key) }
            return FetchError(.levelsFailed, level: level, key: key, failures: fetch.failures)
        }
        return FetchError(.levelsFailed, level: level, key: key,
                          failures: error.levelFailures(level: level, operation: .get, key: key))
    }
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

    /// ``underlying`` as `E`, looking through the errors levels wrap.
    public func cause<E: Error>(as type: E.Type) -> E? {
        if let found = underlying as? E { return found }
        if let one = underlying as? LevelFailure { return one.cause(as: type) }
        if let many = underlying as? LevelsFailedError { return many.failures.lazy.compactMap { $0.cause(as: type) }.first }
        if let fetch = underlying as? FetchError { return fetch.cause(as: type) }
        return nil
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
