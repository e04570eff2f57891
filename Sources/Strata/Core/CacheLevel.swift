/// One level of a cache: memory, disk, a shared store, a network origin, or any
/// composition of those.
///
/// A miss is reported by throwing ``FetchError/valueNotInCache`` from ``get(_:)``
/// (or by returning `nil` from ``getIfPresent(_:)``); every other error is a real
/// failure. All operations run on the caller's executor (the package enables
/// `NonisolatedNonsendingByDefault`), so a caller on an actor pays no executor hop
/// per request; levels that block (disk IO) offload that work themselves.
public protocol CacheLevel<Key, Value>: Sendable {
    associatedtype Key: Sendable
    associatedtype Value: Sendable

    /// The value for `key`. Throws ``FetchError/valueNotInCache`` on a miss.
    func get(_ key: Key) async throws -> Value

    /// The value for `key`, or `nil` on a miss (or when a condition skips this
    /// level). Real failures still throw.
    func getIfPresent(_ key: Key) async throws -> Value?

    /// Stores `value` for `key`.
    func set(_ value: Value, forKey key: Key) async throws

    /// Removes `key`. Removing an absent key is not an error.
    func remove(_ key: Key) async throws

    /// Removes everything this level stores.
    func clear() async

    /// Releases what can be rebuilt (memory levels empty themselves).
    func onMemoryWarning() async

    /// A short human-readable name used in errors, logs and statistics.
    var name: String { get }

    /// Returns once the background writes this level started (back-fills of a
    /// composition) have finished. Wrappers forward it; plain levels return at once.
    func waitForPendingWrites() async
}

extension CacheLevel {
    /// Default: calls ``get(_:)`` and maps a miss or a skipped condition to `nil`.
    public func getIfPresent(_ key: Key) async throws -> Value? {
        do {
            return try await get(key)
        } catch let error as FetchError where error.isMiss {
            return nil
        }
    }

    public var name: String { defaultLevelName(Self.self) }

    public func waitForPendingWrites() async {}
}

/// A short name for a level type: the type name without its generic arguments.
@usableFromInline
func defaultLevelName(_ type: Any.Type) -> String {
    let full = String(describing: type)
    if let angle = full.firstIndex(of: "<") { return String(full[..<angle]) }
    return full
}
