import DequeModule
import Strata
import Synchronization

/// Writes a Redis level accepted while Redis could not be reached, kept to
/// be replayed once it can (``RedisCacheLevel``'s `outageBacklog`).
///
/// Newest per key: a later set or remove of a key replaces the one kept; a
/// clear drops every write kept before it and is replayed first. At most
/// `capacity` keys: past it the oldest write is dropped (counted in
/// ``dropped``). A write is taken out for replay and put back if the replay
/// fails, unless a newer one of its key arrived meanwhile.
final class RedisOutageBacklog<Key: Sendable, Value: Sendable>: Sendable {
    enum Write: Sendable {
        case set(Value, expiresAt: CacheInstant?)
        case remove
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
        var sequence: UInt64 = 0
        var dropped = 0
        var replayed = 0
        /// Taken for replay and not yet landed or put back.
        var inFlight = 0
        var replaying = false
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

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

    /// A clear: every write kept so far is void; the clear is replayed first.
    func keepClear() -> Bool {
        state.withLock { state in
            state.entries.removeAll()
            state.order.removeAll()
            state.clearPending = true
            return start(&state)
        }
    }

    private func start(_ state: inout State) -> Bool {
        guard !state.replaying else { return false }
        state.replaying = true
        return true
    }

    /// Takes everything kept, in the order kept (the clear first).
    func take() -> (clear: Bool, entries: [(name: [UInt8], entry: Entry)]) {
        state.withLock { state in
            let entries = state.order.compactMap { item -> (name: [UInt8], entry: Entry)? in
                guard let entry = state.entries[item.name], entry.sequence == item.sequence else { return nil }
                return (item.name, entry)
            }
            defer {
                state.inFlight = entries.count + (state.clearPending ? 1 : 0)
                state.entries.removeAll()
                state.order.removeAll()
                state.clearPending = false
            }
            return (state.clearPending, entries)
        }
    }

    /// A replayed write landed.
    func landed() {
        state.withLock { state in
            state.replayed += 1
            state.inFlight -= 1
        }
    }

    /// A replay failed: the writes go back, unless newer ones of their keys came.
    func putBack(clear: Bool, _ failed: [(name: [UInt8], entry: Entry)]) {
        state.withLock { state in
            state.inFlight = 0
            if clear && !state.clearPending {
                // Writes kept since the failed clear came after it: keep them, clear first.
                state.clearPending = true
            }
            for (name, entry) in failed.reversed() where state.entries[name] == nil {
                state.entries[name] = entry
                state.order.prepend((name, entry.sequence))
            }
        }
    }

    /// Whether the replay may stop (nothing left); otherwise it goes on.
    func finishIfEmpty() -> Bool {
        state.withLock { state in
            guard state.entries.isEmpty && !state.clearPending else { return false }
            state.replaying = false
            return true
        }
    }

    var pending: Int { state.withLock { $0.entries.count + ($0.clearPending ? 1 : 0) + $0.inFlight } }
    var dropped: Int { state.withLock { $0.dropped } }
    var replayed: Int { state.withLock { $0.replayed } }
}
