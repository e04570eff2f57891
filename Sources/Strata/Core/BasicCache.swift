/// A level built from closures; also the type-erased form of any level
/// (see ``CacheLevel/normalize()``).
public struct BasicCache<Key: Sendable, Value: Sendable>: CacheLevel {
    public typealias Get = @Sendable (Key) async throws -> Value
    public typealias GetIfPresent = @Sendable (Key) async throws -> Value?
    public typealias Set = @Sendable (Value, Key) async throws -> Void
    public typealias Remove = @Sendable (Key) async throws -> Void
    public typealias Action = @Sendable () async -> Void

    @usableFromInline let getClosure: Get
    @usableFromInline let getIfPresentClosure: GetIfPresent?
    @usableFromInline let setClosure: Set
    @usableFromInline let removeClosure: Remove
    @usableFromInline let clearClosure: Action
    @usableFromInline let memoryWarningClosure: Action
    @usableFromInline let pendingWritesClosure: Action?
    public let name: String

    /// A level from closures. `get` throws ``FetchError/valueNotInCache`` on a miss.
    public init(
        name: String = "basic",
        get: @escaping Get,
        set: @escaping Set,
        remove: @escaping Remove,
        clear: @escaping Action,
        onMemoryWarning: @escaping Action
    ) {
        self.init(name: name, get: get, getIfPresent: nil, set: set, remove: remove,
                  clear: clear, onMemoryWarning: onMemoryWarning, waitForPendingWrites: nil)
    }

    @usableFromInline
    init(name: String, get: @escaping Get, getIfPresent: GetIfPresent?, set: @escaping Set,
         remove: @escaping Remove, clear: @escaping Action, onMemoryWarning: @escaping Action,
         waitForPendingWrites: Action?) {
        self.pendingWritesClosure = waitForPendingWrites
        self.name = name
        self.getClosure = get
        self.getIfPresentClosure = getIfPresent
        self.setClosure = set
        self.removeClosure = remove
        self.clearClosure = clear
        self.memoryWarningClosure = onMemoryWarning
    }

    @inlinable public func get(_ key: Key) async throws -> Value { try await getClosure(key) }

    @inlinable public func getIfPresent(_ key: Key) async throws -> Value? {
        if let getIfPresentClosure { return try await getIfPresentClosure(key) }
        do { return try await getClosure(key) } catch let error as FetchError where error.isMiss { return nil }
    }

    @inlinable public func set(_ value: Value, forKey key: Key) async throws { try await setClosure(value, key) }
    @inlinable public func remove(_ key: Key) async throws { try await removeClosure(key) }
    @inlinable public func clear() async { await clearClosure() }
    @inlinable public func onMemoryWarning() async { await memoryWarningClosure() }
    public func waitForPendingWrites() async { await pendingWritesClosure?() }
}

/// A read-only level from a closure.
public struct BasicFetcher<Key: Sendable, Value: Sendable>: Fetcher {
    @usableFromInline let getClosure: @Sendable (Key) async throws -> Value
    public let name: String

    /// `get` throws ``FetchError/valueNotInCache`` when the origin has nothing.
    public init(name: String = "fetcher", get: @escaping @Sendable (Key) async throws -> Value) {
        self.name = name
        self.getClosure = get
    }

    @inlinable public func get(_ key: Key) async throws -> Value { try await getClosure(key) }
}

extension CacheLevel {
    /// This level erased to ``BasicCache``; returns `self` when it already is one.
    public func normalize() -> BasicCache<Key, Value> {
        if let already = self as? BasicCache<Key, Value> { return already }
        return BasicCache(
            name: name,
            get: { try await self.get($0) },
            getIfPresent: { try await self.getIfPresent($0) },
            set: { try await self.set($0, forKey: $1) },
            remove: { try await self.remove($0) },
            clear: { await self.clear() },
            onMemoryWarning: { await self.onMemoryWarning() },
            waitForPendingWrites: { await self.waitForPendingWrites() }
        )
    }
}
