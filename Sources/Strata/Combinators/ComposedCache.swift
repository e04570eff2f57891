/// Two levels in series: `upper` is asked first, `lower` on a miss or error.
///
/// - Get: falls through on a miss *or* any error of `upper` (availability
///   first). A value found below is returned at once and back-filled into
///   `upper` in the background **with the lower entry's expiry** (never a
///   fresh TTL); a failed back-fill is logged and counted (``backfillFailures``,
///   instrumented levels), never failing the get. All levels missing throws
///   ``FetchError/valueNotInCache``; errors with no value, ``LevelsFailedError``.
/// - **Back-fills never undo writes** (`WriteOrder`): one a write got ahead
///   of is dropped (``backfillsSkipped``).
/// - Set and remove run on both levels concurrently, failures throwing
///   ``LevelsFailedError``; clear and memory warnings reach both. **A level whose set failed
///   keeps no older value** (removed, best effort); a failed back-fill replaced nothing.
/// - **Invalidations from below drop what is above** (``invalidationsApplied``);
///   changes reported by `upper` drop back-fills into it begun before them.
/// - Build a stack once and ask it per request: it keeps its levels coherent
///   while it lives (`StackCoordinator`'s design note says how).
public struct ComposedCache<Upper: CacheLevel, Lower: CacheLevel>: CacheLevel
where Upper.Key == Lower.Key, Upper.Value == Lower.Value {
    /// The key both levels share.
    public typealias Key = Upper.Key
    /// The value both levels share.
    public typealias Value = Upper.Value

    /// The level asked first and back-filled from `lower`.
    public let upper: Upper
    /// The level asked on a miss or an error of `upper`.
    public let lower: Lower
    /// Write order, back-fills, subscriptions and writer id, shared by every copy.
    @usableFromInline let stack: StackCoordinator<Upper, Lower>
    @usableFromInline var order: WriteOrder { stack.order }
    @usableFromInline var backfills: BackfillTracker { stack.backfills }
    /// Reads compiled where the composition was created, for callers without
    /// its types (``SpecialisedPaths``): `any CacheLevel` over 3 levels costs
    /// 3.5x the concrete hit, 4.7x without (the rest is mostly generic metadata).
    @usableFromInline let specialisedValue: @Sendable (Self, Key) async throws -> Value?
    @usableFromInline let specialisedEntry: @Sendable (Self, Key) async throws -> CacheEntry<Value>?

    /// `upper` in front of `lower`.
    @inlinable
    public init(_ upper: Upper, _ lower: Lower) {
        self.init(upper, lower,
                  value: { composition, key in try await composition.readValue(key) },
                  entry: { composition, key in try await composition.readEntry(key) })
    }

    @usableFromInline
    init(
        _ upper: Upper, _ lower: Lower,
        value: @escaping @Sendable (Self, Key) async throws -> Value?,
        entry: @escaping @Sendable (Self, Key) async throws -> CacheEntry<Value>?
    ) {
        self.upper = upper
        self.lower = lower
        self.specialisedValue = value
        self.specialisedEntry = entry
        self.stack = StackCoordinator(upper, lower)
    }

    public var name: String { "\(upper.name) + \(lower.name)" }

    /// Both levels forget what they can rebuild; this composition's back-fills
    /// whose read began before are dropped, one landing meanwhile is undone.
    public func lostCoherence() {
        stack.order.noteCoherenceLost()
        stack.detachReads(.all)
        upper.lostCoherence()
        lower.lostCoherence()
    }

    /// Whether a level inside shares reads (a pool). The stack's own single
    /// flight is not counted: a composition above asks it one caller per key
    /// anyway, and would pay an executor hop per miss (the read-start task-local).
    public var sharesReadsInFlight: Bool { upper.sharesReadsInFlight || lower.sharesReadsInFlight }

    public func endSharingReads(_ invalidation: CacheInvalidation<Key>) {
        stack.detachReads(invalidation)
        upper.endSharingReads(invalidation)
        lower.endSharingReads(invalidation)
    }

    /// Whether this code was compiled for concrete level types (see ``SpecialisedPaths``).
    @inlinable @inline(__always)
    var isSpecialised: Bool { _isConcrete(Upper.self) && _isConcrete(Lower.self) }

    @inlinable @inline(__always)
    public func getIfPresent(_ key: Key) async throws -> Value? {
        if isSpecialised { return try await readValue(key) }
        return try await specialisedValue(self, key)
    }

    @inlinable @inline(__always)
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        if isSpecialised { return try await readEntry(key) }
        return try await specialisedEntry(self, key)
    }

    @inlinable @inline(__always)
    func readValue(_ key: Key) async throws -> Value? {
        var failures: [LevelFailure] = []
        do {
            if let value = try await upper.getIfPresent(key) { return value }
        } catch {
            try Self.rethrowIfCancelled(error)
            failures += error.levelFailures(level: upper.name, operation: .get, key: key)
        }
        return try await readLower(key, failures: failures)?.value
    }

    @inlinable @inline(__always)
    func readEntry(_ key: Key) async throws -> CacheEntry<Value>? {
        var failures: [LevelFailure] = []
        do {
            if let entry = try await upper.entry(forKey: key) { return entry }
        } catch {
            try Self.rethrowIfCancelled(error)
            failures += error.levelFailures(level: upper.name, operation: .get, key: key)
        }
        return try await readLower(key, failures: failures)
    }

    /// `upper`'s synchronous reads: a hit there is the answer; else ``getIfPresent(_:)``.
    @inlinable
    public var synchronousRead: SynchronousRead<Key, Value>? { upper.synchronousRead }

    @inlinable
    public func synchronousValue(forKey key: Key) -> Value? { upper.synchronousValue(forKey: key) }

    /// Asks `upper` for every key, then `lower` for those it lacks (a batch each), back-filling.
    public func entries(forKeys keys: [Key], maxConcurrency: Int?) async -> [CacheEntry<Value>?] {
        var results = await upper.entries(forKeys: keys, maxConcurrency: maxConcurrency)
        let missing = results.indices.filter { results[$0] == nil }
        if missing.isEmpty || Task.isCancelled { return results }
        let tickets = missing.map { order.beginRead(keys[$0]) }
        let below = await lower.entries(forKeys: missing.map { keys[$0] }, maxConcurrency: maxConcurrency)
        for (position, index) in missing.enumerated() {
            guard let entry = below[position] else { continue }
            results[index] = entry
            backfill(entry, forKey: keys[index], ticket: tickets[position])
        }
        return results
    }

    /// The miss path: asks `lower`, starts the back-fill, and reports failures.
    @usableFromInline
    func readLower(_ key: Key, failures: [LevelFailure]) async throws -> CacheEntry<Value>? {
        var failures = failures
        try Task.checkCancellation()
        do {
            if let entry = try await readLowerAndBackfill(key) { return entry }
        } catch {
            try Self.rethrowIfCancelled(error)
            failures += error.levelFailures(level: lower.name, operation: .get, key: key)
        }
        if failures.isEmpty { return nil }
        throw LevelsFailedError(operation: .get, failures: failures)
    }

    /// The one way a composition reads `lower` for one key (ticket taken now),
    /// back-filling what it has. A shared read may have begun earlier: the read
    /// start moves back and judges the back-fill (see ``CacheContext/readStart``).
    @usableFromInline
    func readLowerAndBackfill(_ key: Key) async throws -> CacheEntry<Value>? {
        guard let flightKey = ReadFlights<Value>.flightKey(key) else { return try await readLowerAlone(key).entry }
        let (entry, joinedAt) = try await stack.flights.read(flightKey) {
            let (entry, startedAt) = try await readLowerAlone(key)
            return (entry, startedAt, forJoiners: true)
        }
        // Joined a read begun earlier: a back-fill above is judged by that read.
        if let joinedAt { CacheContext.readStart?.moveBack(to: joinedAt) }
        return entry
    }

    /// One caller's read of `lower` and its back-fill, with when the read that
    /// found the entry began (earlier if it joined a read in flight below).
    func readLowerAlone(_ key: Key) async throws -> (entry: CacheEntry<Value>?, startedAt: ContinuousClock.Instant) {
        let ticket = order.beginRead(key)
        let started = ticket?.startedAt ?? ContinuousClock.now
        guard lower.sharesReadsInFlight else {
            guard let entry = try await lower.entry(forKey: key) else { return (nil, started) }
            backfill(entry, forKey: key, ticket: ticket)
            return (entry, started)
        }
        let readStart = ReadStart(started, parent: CacheContext.readStart)
        let lower = self.lower
        guard let entry = try await CacheContext.$readStart.withValue(readStart, operation: { try await lower.entry(forKey: key) })
        else { return (nil, readStart.value) }
        backfill(entry, forKey: key, ticket: ticket, readStart: readStart.value)
        return (entry, readStart.value)
    }

    /// Back-fills `entry` into `upper` in the background unless a write got in first (`nil` ticket).
    @usableFromInline
    func backfill(_ entry: CacheEntry<Value>, forKey key: Key, ticket: WriteOrder.Ticket?,
                  readStart: ContinuousClock.Instant? = nil) {
        let upper = self.upper, stack = self.stack
        stack.backfills.start(level: upper.name, key: key) {
            guard let ticket else { return false }
            // Holds the stack: the composition may be gone before this lands,
            // and until then `upper`'s reports must still reach the order.
            // The stack's own write: a shared upper level's report of it is skipped.
            return try await CacheContext.writing(as: stack.writer) {
                try await stack.order.land(ticket, readStart: readStart, { startedAt in
                    try await upper.backfill(Backfill(value: entry.value, expiresAt: entry.expiresAt, readStartedAt: startedAt),
                                             forKey: key)
                }, undo: { upper.lostCoherence() })
            }
        }
    }

    @usableFromInline
    static func rethrowIfCancelled(_ error: any Error) throws {
        if error is CancellationError || Task.isCancelled { throw CancellationError() }
    }

    public func set(_ value: Value, forKey key: Key) async throws {
        try await write(.set, key,
                        top: { [upper] in try await upper.set(value, forKey: key) },
                        bottom: { [lower] in try await lower.set(value, forKey: key) })
    }

    public func set(_ value: Value, forKey key: Key, expiresAt: CacheInstant?) async throws {
        try await write(.set, key,
                        top: { [upper] in try await upper.set(value, forKey: key, expiresAt: expiresAt) },
                        bottom: { [lower] in try await lower.set(value, forKey: key, expiresAt: expiresAt) })
    }

    public func remove(_ key: Key) async throws {
        try await write(.remove, key,
                        top: { [upper] in try await upper.remove(key) },
                        bottom: { [lower] in try await lower.remove(key) })
    }

    /// A back-fill into this composition (the upper level of another): `lower`
    /// first, then `upper` unless `lower` declined it (``BackfillDeclined``),
    /// ordered as a write; `lower` failing otherwise (down) does not stop `upper`.
    /// No cleaning after a failure: a back-fill replaces nothing (``Backfill``);
    /// cleaning one into Redis of unknown outcome deleted another client's value.
    public func backfill(_ fill: Backfill<Value>, forKey key: Key) async throws {
        let upper = self.upper, lower = self.lower
        try await CacheContext.writing(as: stack.writer) {
            let stripe = await order.beginWrite(key)
            defer { order.endWrite(stripe) }
            stack.detachReads(.key(key))
            defer { stack.detachReads(.key(key)) }
            try Task.checkCancellation()
            let bottomError = await attempt { try await lower.backfill(fill, forKey: key) }
            if bottomError is BackfillDeclined { throw BackfillDeclined() }
            let topError = await attempt { try await upper.backfill(fill, forKey: key) }
            if topError is BackfillDeclined { throw BackfillDeclined() }
            try Self.collect(.set, key: key, (upper.name, topError), (lower.name, bottomError))
        }
    }

    /// Writes both levels concurrently, ordered against back-fills; cleans a level whose set failed.
    /// Replaces `seen` in `lower`, then in `upper` (see
    /// ``CacheLevel/replace(_:with:forKey:)``), ordered as a write. `lower`
    /// declining stops it; `upper` failing after `lower` replaced loses its
    /// entry (best effort), so that `seen` is not answered from it.
    public func replace(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws {
        try await CacheContext.writing(as: stack.writer) {
            let stripe = await order.beginWrite(key)
            defer { order.endWrite(stripe) }
            try await replacing(seen, with: fill, forKey: key)
        }
    }

    /// ``replace(_:with:forKey:)``'s writes, with the key's stripe held.
    func replacing(_ seen: Value, with fill: Backfill<Value>, forKey key: Key) async throws {
        stack.detachReads(.key(key))
        defer { stack.detachReads(.key(key)) }
        lower.endSharingReads(.key(key))
        try await lower.replace(seen, with: fill, forKey: key)
        do {
            try await upper.replace(seen, with: fill, forKey: key)
        } catch {
            _ = await attempt { try await upper.remove(key) }
            throw error
        }
    }

    private func write(
        _ operation: CacheOperation, _ key: Key,
        top topWrite: @escaping @Sendable () async throws -> Void,
        bottom bottomWrite: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await CacheContext.writing(as: stack.writer) {
            let stripe = await order.beginWrite(key)
            defer { order.endWrite(stripe) }
            stack.detachReads(.key(key))
            defer { stack.detachReads(.key(key)) }
            // Cancelled before either half began: nothing is written (a half
            // that starts cancelled may fail while the other stores the value).
            try Task.checkCancellation()
            async let top = attempt { try await topWrite() }
            async let bottom = attempt { try await bottomWrite() }
            let (topError, bottomError) = await (top, bottom)
            if operation == .set {
                await Self.clean(upper, key, after: topError)
                await Self.clean(lower, key, after: bottomError)
            }
            try Self.collect(operation, key: key, (upper.name, topError), (lower.name, bottomError))
        }
    }

    /// After a failed set, removes `level`'s old entry for `key` (best effort)
    /// so no later get returns the value the set replaced; a nested composition
    /// (error ``LevelsFailedError``) already cleaned its failed level. Not part
    /// of this composition's write: a shared store reports it here too (and to
    /// those the write passed through), whose upper levels took the value the
    /// store no longer holds. Not cancelled with the caller: a set cancelled
    /// while one half waited (a permit, a connection) failed *because* of that,
    /// and a remove in that task would fail too, leaving the replaced value.
    private static func clean<Level: CacheLevel>(_ level: Level, _ key: Key, after error: (any Error)?) async
    where Level.Key == Key {
        guard let error, !(error is LevelsFailedError) else { return }
        await CacheContext.outsideWrite {
            await Task { _ = await attempt { try await level.remove(key) } }.value
        }
    }

    /// A change reported from elsewhere: both levels drop the key (ordered
    /// as a remove) or everything (as a clear), each as an invalidation.
    public func invalidate(_ invalidation: CacheInvalidation<Key>) async throws {
        switch invalidation {
        case .key(let key):
            try await write(.remove, key,
                            top: { [upper] in try await upper.invalidate(invalidation) },
                            bottom: { [lower] in try await lower.invalidate(invalidation) })
        case .all, .contactLost:
            await clearing(top: { [upper] in _ = await attempt { try await upper.invalidate(.all) } },
                           bottom: { [lower] in _ = await attempt { try await lower.invalidate(.all) } })
        }
    }

    public func clear() async {
        await clearing(top: { [upper] in await upper.clear() }, bottom: { [lower] in await lower.clear() })
    }

    public func onMemoryWarning() async {
        await clearing(top: { [upper] in await upper.onMemoryWarning() },
                       bottom: { [lower] in await lower.onMemoryWarning() })
    }

    /// Clears both levels as this composition's write, holding every stripe.
    private func clearing(top: @escaping @Sendable () async -> Void, bottom: @escaping @Sendable () async -> Void) async {
        await CacheContext.writing(as: stack.writer) {
            await order.beginClear()
            defer { order.endClear() }
            stack.detachReads(.all)
            defer { stack.detachReads(.all) }
            async let topDone: Void = top()
            async let bottomDone: Void = bottom()
            _ = await (topDone, bottomDone)
        }
    }

    /// A change to either level reported by its store is a change to this one.
    public func subscribe(_ listener: @escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription {
        CacheSubscription([upper.subscribe(listener), lower.subscribe(listener)])
    }

    public func waitForPendingWrites() async {
        await backfills.waitUntilIdle()
        await upper.waitForPendingWrites()
        await lower.waitForPendingWrites()
    }

    /// Back-fills started by this composition (not counting nested ones).
    public var backfillsStarted: Int { backfills.counts.started }
    /// Back-fills that failed (logged at `warning` under `strata.backfill`).
    public var backfillFailures: Int { backfills.counts.failed }
    /// Back-fills dropped because a write to their key got in first.
    public var backfillsSkipped: Int { backfills.counts.skipped }
    /// Invalidations reported by `lower` and applied to `upper`.
    public var invalidationsApplied: Int { stack.invalidationsApplied }

    private static func collect(_ operation: CacheOperation, key: Key, _ results: (String, (any Error)?)...) throws {
        var failures: [LevelFailure] = []
        for (level, error) in results {
            if let error { failures += error.levelFailures(level: level, operation: operation, key: key) }
        }
        if failures.isEmpty { return }
        if failures.allSatisfy({ $0.underlying is CancellationError }) { throw CancellationError() }
        throw LevelsFailedError(operation: operation, failures: failures)
    }
}

/// Runs `body` and returns its error instead of throwing it.
@usableFromInline
func attempt(_ body: () async throws -> Void) async -> (any Error)? {
    do { try await body(); return nil } catch { return error }
}

extension CacheLevel {
    /// `self` in front of `next`: see ``ComposedCache``.
    @inlinable
    public func compose<Next: CacheLevel>(_ next: Next) -> ComposedCache<Self, Next>
    where Next.Key == Key, Next.Value == Value {
        ComposedCache(self, next)
    }

    /// `lhs.compose(rhs)`.
    @inlinable
    public static func + <Next: CacheLevel>(lhs: Self, rhs: Next) -> ComposedCache<Self, Next>
    where Next.Key == Key, Next.Value == Value {
        ComposedCache(lhs, rhs)
    }
}

/// A composition's two sides, untyped (for code looking through a stack: ``PooledCache``'s clock).
protocol ComposedLevels {
    var upperLevel: any CacheLevel { get }
    var lowerLevel: any CacheLevel { get }
    /// Gets that joined a read of the lower level in flight (tests).
    var readsJoined: Int { get }
}

extension ComposedCache: ComposedLevels {
    var upperLevel: any CacheLevel { upper }
    var lowerLevel: any CacheLevel { lower }
    var readsJoined: Int { stack.flights.joined }
}

