import DequeModule
import Strata
import Synchronization

/// Writes a Redis level accepted while Redis could not be reached, kept to
/// be replayed once it can (``RedisCacheLevel``'s `outageBacklog`).
///
/// - Newest per key: a later set or remove of a key replaces the one kept;
///   a clear drops every write kept before it and is replayed first.
/// - **While it holds anything, every write goes through it**, even once
///   Redis answers again: a write made directly would land before an older
///   one still waiting, which would then replay over it. So writes keep
///   their order per key; they land when the replay reaches them.
/// - Reads of the level see a key's write waiting here (``pendingWrite(_:)``):
///   the writer never reads the value its write replaced.
/// - Taken out for replay, a write stays visible to reads until it lands or
///   is put back (unless a newer one of its key, or a clear, came meanwhile).
/// - At most `capacity` keys: past it the oldest write is dropped (counted
///   in ``dropped``), and so is one Redis refuses (not a lost connection).
final class RedisOutageBacklog<Key: Sendable, Value: Sendable>: Sendable {
    enum Write: Sendable {
        case set(Value, expiresAt: CacheInstant?)
        case remove

        /// What a read of the key answers while the write waits.
        var entry: CacheEntry<Value>? {
            guard case .set(let value, let expiresAt) = self else { return nil }
            if let expiresAt, expiresAt <= SystemClock().now() { return nil }
            return CacheEntry(value: value, expiresAt: expiresAt)
        }
        var value: Value? { entry?.value }
    }

    struct Entry: Sendable {
        let key: Key
        let write: Write
        let sequence: UInt64
    }

    private struct State {
        var entries: [[UInt8]: Entry] = [:]
        var order = Deque<(name: [UInt8], sequence: UInt64)>()
        var clearPending = false
        /// Taken for replay, not yet landed or put back.
        var inFlight: [[UInt8]: Entry] = [:]
        var clearInFlight = false
        /// A clear was kept since the last take: what is in flight is void.
        var clearedSinceTake = false
        var sequence: UInt64 = 0
        var dropped = 0
        var replayed = 0
        var replaying = false
        var stopped = false

        var isEmpty: Bool { entries.isEmpty && !clearPending && inFlight.isEmpty && !clearInFlight }
    }

    private let state = Mutex(State())
    /// Whether writes must go through the backlog (it holds or replays something).
    private let active = Atomic<Bool>(false)
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Whether writes go through the backlog now (a cheap check for every write and read).
    var isActive: Bool { active.load(ordering: .acquiring) }

    /// Keeps `write` of `key` (Redis name `name`); returns whether a replay
    /// must be started (none is under way).
    func keep(_ write: Write, of key: Key, name: [UInt8]) -> Bool {
        state.withLock { state in
            state.sequence &+= 1
            state.entries[name] = Entry(key: key, write: write, sequence: state.sequence)
            state.order.append((name, state.sequence))
            while state.entries.count > capacity, let oldest = state.order.popFirst() {
                guard state.entries[oldest.name]?.sequence == oldest.sequence else { continue }
                state.entries[oldest.name] = nil
                state.dropped += 1
            }
            if state.order.count > 2 * state.entries.count + 64 {
                let entries = state.entries
                state.order = Deque(state.order.filter { entries[$0.name]?.sequence == $0.sequence })
            }
            return start(&state)
        }
    }

    /// A clear: every write kept so far, or in flight, is void; the clear is replayed first.
    func keepClear() -> Bool {
        state.withLock { state in
            state.entries.removeAll()
            state.order.removeAll()
            state.clearPending = true
            state.clearedSinceTake = true
            return start(&state)
        }
    }

    private func start(_ state: inout State) -> Bool {
        active.store(true, ordering: .releasing)
        guard !state.replaying, !state.stopped else { return false }
        state.replaying = true
        return true
    }

    /// The write of `name` waiting here or in flight, newest first; `nil`
    /// if none (a pending clear: `.remove`, the key is gone).
    func pendingWrite(_ name: [UInt8]) -> Write? {
        state.withLock { state in
            if let entry = state.entries[name] { return entry.write }
            if state.clearPending { return .remove }
            if let entry = state.inFlight[name] { return entry.write }
            return state.clearInFlight ? .remove : nil
        }
    }

    /// Takes everything kept, in the order kept (the clear first).
    func take() -> (clear: Bool, entries: [(name: [UInt8], entry: Entry)]) {
        state.withLock { state in
            let entries = state.order.compactMap { item -> (name: [UInt8], entry: Entry)? in
                guard let entry = state.entries[item.name], entry.sequence == item.sequence else { return nil }
                return (item.name, entry)
            }
            let clear = state.clearPending
            state.inFlight = Dictionary(entries.map { ($0.name, $0.entry) }, uniquingKeysWith: { $1 })
            state.clearInFlight = clear
            state.clearedSinceTake = false
            state.entries.removeAll()
            state.order.removeAll()
            state.clearPending = false
            return (clear, entries)
        }
    }

    /// Whether `name`'s write taken for replay (`sequence`) is still the one
    /// to write: no clear and no newer write of the key came meanwhile (if
    /// one did, it is dropped from the writes in flight).
    func isCurrent(_ name: [UInt8], _ sequence: UInt64) -> Bool {
        state.withLock { state in
            guard !state.clearedSinceTake, state.entries[name] == nil, state.inFlight[name]?.sequence == sequence else {
                state.inFlight[name] = nil
                return false
            }
            return true
        }
    }

    /// The clear taken for replay landed.
    func clearLanded() {
        state.withLock { state in
            state.clearInFlight = false
            state.replayed += 1
        }
    }

    /// `name`'s write taken for replay landed (`dropped`: Redis refused it for good).
    func landed(_ name: [UInt8], dropped: Bool = false) {
        state.withLock { state in
            state.inFlight[name] = nil
            if dropped { state.dropped += 1 } else { state.replayed += 1 }
        }
    }

    /// The replay lost Redis again: what it did not land goes back, unless
    /// a clear or a newer write of its key came meanwhile.
    func putBack() {
        state.withLock { state in
            let voided = state.clearedSinceTake
            if state.clearInFlight && !voided { state.clearPending = true }
            if !voided {
                for (name, entry) in state.inFlight.sorted(by: { $0.value.sequence > $1.value.sequence })
                where state.entries[name] == nil {
                    state.entries[name] = entry
                    state.order.prepend((name, entry.sequence))
                }
            }
            state.inFlight.removeAll()
            state.clearInFlight = false
        }
    }

    /// Whether the replay may stop: nothing is left (writes go to Redis
    /// again), or the level was shut down.
    func finishIfEmpty() -> Bool {
        state.withLock { state in
            guard state.isEmpty || state.stopped else { return false }
            state.replaying = false
            if state.isEmpty { active.store(false, ordering: .releasing) }
            return true
        }
    }

    /// The level shut down: the replay stops (what it holds is lost).
    func stop() { state.withLock { $0.stopped = true } }
    var isStopped: Bool { state.withLock { $0.stopped } }

    var pending: Int {
        state.withLock { state in
            state.entries.count + (state.clearPending ? 1 : 0) + state.inFlight.count + (state.clearInFlight ? 1 : 0)
        }
    }
    var dropped: Int { state.withLock { $0.dropped } }
    var replayed: Int { state.withLock { $0.replayed } }
}
