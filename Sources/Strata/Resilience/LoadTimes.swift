import Synchronization

/// When this cache last loaded or refreshed each key (at most `capacity`
/// keys, any one forgotten when full): refresh ahead is due a fraction of
/// the TTL after that, whatever deadline the hit's entry carries. A level
/// with a shorter TTL than the load's caps its copy's deadline, which made
/// every hit on it look due.
final class LoadTimes<Key: Hashable & Sendable>: Sendable {
    private let times = Mutex<[Key: CacheInstant]>([:])
    private let capacity: Int

    init(capacity: Int) { self.capacity = max(capacity, 1) }

    func loaded(_ key: Key, at time: CacheInstant) {
        times.withLock { times in
            if times[key] == nil, times.count >= capacity, let any = times.first?.key { times[any] = nil }
            times[key] = time
        }
    }

    subscript(key: Key) -> CacheInstant? { times.withLock { $0[key] } }

    /// A write or a change of `key`: its deadline is no longer the load's.
    func forget(_ key: Key) { times.withLock { _ = $0.removeValue(forKey: key) } }

    func forgetAll() { times.withLock { $0.removeAll() } }
}
