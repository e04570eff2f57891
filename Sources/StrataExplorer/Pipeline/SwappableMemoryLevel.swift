import Foundation
import Strata
import Synchronization

/// A pipeline's memory level that a live edit can replace: `set-ttl` and
/// `set-policy` rebuild it (``rebuild(as:ttl:)``), `set-capacity` resizes
/// it in place. The wrappers around it (instrumentation, condition, cap,
/// pool) stay, and so do the counters and the composition.
///
/// Writes run holding `state`, as does a rebuild's copy and switch: a write
/// lands before the copy (and is copied) or after the switch (on the new
/// level), so no removed key comes back and no set is lost. A read takes
/// the level current when it starts.
final class SwappableMemoryLevel: CacheLevel, LevelCounterReporting, InspectableLevel {
    typealias Key = String
    typealias Value = Data

    private struct State {
        var level: MemoryCacheLevel<String, Data>
        /// What the replaced levels evicted and declined (their counters continue).
        var retiredEvictions = 0
        var retiredDeclined = 0
        /// Whether a level here ever had a TTL or sliding expiry (entries with deadlines to sweep).
        var hadDeadlines: Bool
    }

    private let state: Mutex<State>
    let name: String

    init(_ level: MemoryCacheLevel<String, Data>, hasDeadlines: Bool) {
        name = level.name
        state = Mutex(State(level: level, hadDeadlines: hasDeadlines))
    }

    /// The level in use now.
    var current: MemoryCacheLevel<String, Data> { state.withLock { $0.level } }

    /// Whether entries may carry deadlines (the level has, or had, a TTL): worth sweeping.
    var mayHoldDeadlines: Bool { state.withLock { $0.hadDeadlines } }

    func getIfPresent(_ key: String) async throws -> Data? { current.value(forKey: key) }

    func entry(forKey key: String) async throws -> CacheEntry<Data>? { current.storedEntry(forKey: key) }

    /// Reads never suspend, as the memory level's: the composition's fast path takes them.
    var synchronousRead: SynchronousRead<String, Data>? {
        SynchronousRead(value: { [self] key in current.value(forKey: key) }, entry: { [self] key in current.storedEntry(forKey: key) })
    }

    func synchronousValue(forKey key: String) -> Data? { current.value(forKey: key) }

    /// A `nil` from the synchronous read is a miss.
    var synchronousReadIsComplete: Bool { true }

    func set(_ value: Data, forKey key: String) async throws {
        try state.withLock { try $0.level.store(value, forKey: key) }
    }

    func set(_ value: Data, forKey key: String, expiresAt: CacheInstant?) async throws {
        try state.withLock { try $0.level.store(value, forKey: key, expiresAt: expiresAt) }
    }

    func backfill(_ fill: Backfill<Data>, forKey key: String) async throws {
        try state.withLock { try $0.level.store(fill.value, forKey: key, expiresAt: fill.expiresAt, backfill: true) }
    }

    /// Only this process writes a memory level: the fill is stored.
    func replace(_ seen: Data, with fill: Backfill<Data>, forKey key: String) async throws {
        try state.withLock { try $0.level.store(fill.value, forKey: key, expiresAt: fill.expiresAt) }
    }

    func remove(_ key: String) async throws { state.withLock { $0.level.removeValue(forKey: key) } }

    func clear() async { state.withLock { $0.level.removeAll() } }

    func onMemoryWarning() async { state.withLock { $0.level.removeAll() } }

    func lostCoherence() { state.withLock { $0.level.removeAll() } }

    /// The current level's counters plus those of the levels it replaced.
    var levelCounters: [String: Int] {
        let (level, evictions, declined) = state.withLock { ($0.level, $0.retiredEvictions, $0.retiredDeclined) }
        var counters = ["evictions": level.evictions + evictions]
        if level.policy == .adaptive || declined > 0 {
            counters["admissionsRejected"] = (level.policy == .adaptive ? level.admissionsRejected : 0) + declined
        }
        return counters
    }

    package var inspector: LevelInspector<String, Data>? { current.inspector }

    /// What a rebuild kept.
    struct Rebuilt: Equatable {
        /// Entries the new level holds.
        var kept: Int
        /// Entries of the old level it does not (refused or evicted by the new one).
        var dropped: Int
    }

    /// Replaces the level by `replacement` (empty), copying the old one's
    /// unexpired entries into it oldest first (``MemoryCacheLevel/keysByRecency()``:
    /// recency under `.lru`, write order under `.adaptive`), so the most
    /// recent end up most recent. An entry keeps its deadline, and with
    /// `ttl` one no later than now + `ttl`: no value outlives the TTL it
    /// had, nor the new one from now. The adaptive policy's frequencies are
    /// not carried over.
    func rebuild(as replacement: MemoryCacheLevel<String, Data>, ttl: Duration?, hasDeadlines: Bool) -> Rebuilt {
        state.withLock { state in
            let old = state.level
            let cap = ttl.flatMap { try? replacement.clock.now().advanced(byTTL: $0) }
            var dropped = 0
            for key in old.keysByRecency().reversed() {
                guard let entry = old.peek(key) else { continue }  // expired since the listing
                let deadline = [entry.expiresAt, cap].compactMap { $0 }.min()
                do { try replacement.store(entry.value, forKey: key, expiresAt: deadline) } catch { dropped += 1 }
            }
            state.retiredEvictions += old.evictions
            if old.policy == .adaptive { state.retiredDeclined += old.admissionsRejected }
            state.hadDeadlines = state.hadDeadlines || hasDeadlines
            state.level = replacement
            let kept = replacement.count
            return Rebuilt(kept: kept, dropped: max(dropped, old.count - kept))
        }
    }
}
