/// The compositions a write passed through on its way down to a shared store,
/// which skip the store's report of it (see "Writers" in ``StackCoordinator``'s
/// design note, and ``CacheChange``).
package struct CacheWriteOrigin: Sendable {
    /// The writer ids (``StackCoordinator/writer``, never reused) of the stacks the write passed through.
    @usableFromInline var writers: [UInt64] = []

    package init() {}

    func contains(_ writer: UInt64) -> Bool { writers.contains(writer) }
}

extension CacheContext {
    /// The compositions whose write is running in this task (empty outside
    /// one): a shared store captures it with each write it makes.
    package static var writeOrigin: CacheWriteOrigin { origin }

    @TaskLocal static var origin = CacheWriteOrigin()

    /// Runs a stack's write with `writer` added to ``writeOrigin``.
    static func writing<T>(as writer: UInt64, _ body: () async throws -> T) async rethrows -> T {
        var extended = origin
        extended.writers.append(writer)
        return try await $origin.withValue(extended) { try await body() }
    }

    /// Runs `body` as part of no composition's write: a store reports what
    /// it does to every composition over it, those the current write passed
    /// through included. For the clean-up after a failed set: what the
    /// levels above took from it is then what the store does not hold.
    static func outsideWrite<T>(_ body: () async throws -> T) async rethrows -> T {
        try await $origin.withValue(CacheWriteOrigin()) { try await body() }
    }
}
