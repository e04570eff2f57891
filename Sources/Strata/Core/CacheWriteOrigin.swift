/// The compositions a write passed through on its way down to a shared store,
/// which skip the store's report of it (see "Writers" in ``StackCoordinator``'s
/// design note, and ``InvalidationListeners/reportLocalWrite(_:origin:)``).
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

    /// Set while a store delivers a report of its own write.
    @TaskLocal static var report: CacheWriteOrigin?

    /// Whether the invalidation being delivered reports a write made in this
    /// process through the level (`reportingLocalWrite(by:_:)`), not a
    /// change another client made.
    public static var isLocalWriteReport: Bool { report != nil }

    /// Delivers a store's report of its own write, made with `origin`
    /// (listeners see ``isLocalWriteReport``). Writes the listeners make
    /// meanwhile start with no origin and are not in the writing request's
    /// ``trace`` (the delivering task inherits its task-locals).
    package static func reportingLocalWrite(by origin: CacheWriteOrigin, _ body: () async -> Void) async {
        await $report.withValue(origin) {
            await $origin.withValue(CacheWriteOrigin()) {
                await $trace.withValue(nil) { await body() }
            }
        }
    }

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

    /// Whether the invalidation being delivered reports a write `writer` is part of.
    static func isReport(ofWriteBy writer: UInt64) -> Bool { report?.contains(writer) ?? false }
}
