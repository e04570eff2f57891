import Strata
import Synchronization

/// A scriptable in-memory level for combinator tests: counts calls, can fail
/// or block on demand.
final class FakeLevel<Key: Hashable & Sendable, Value: Sendable>: CacheLevel {
    struct Calls: Equatable {
        var gets = 0, sets = 0, removes = 0, clears = 0, memoryWarnings = 0
    }

    let name: String
    private let storage = Mutex<[Key: Value]>([:])
    private let calls = Mutex(Calls())
    private let getFailure = Mutex<(any Error)?>(nil)
    private let setFailure = Mutex<(any Error)?>(nil)
    private let gate = Mutex<Gate?>(nil)
    let listeners = InvalidationListeners<Key>()

    init(name: String, _ initial: [Key: Value] = [:]) {
        self.name = name
        storage.withLock { $0 = initial }
    }

    var callCounts: Calls { calls.withLock { $0 } }
    var contents: [Key: Value] { storage.withLock { $0 } }
    func failGets(with error: (any Error)?) { getFailure.withLock { $0 = error } }
    func failSets(with error: (any Error)?) { setFailure.withLock { $0 = error } }
    /// Gets wait on `gate` before answering.
    func holdGets(on gate: Gate?) { self.gate.withLock { $0 = gate } }
    /// Held gets read their value before waiting (a reply already on its way).
    func readBeforeHolding(_ flag: Bool) { readsFirst.withLock { $0 = flag } }
    private let readsFirst = Mutex(false)
    /// Sets wait on `gate` before storing.
    func holdSets(on gate: Gate?) { setGate.withLock { $0 = gate } }
    private let setGate = Mutex<Gate?>(nil)

    func subscribe(_ listener: @escaping @Sendable (CacheChange<Key>) async -> Void) -> CacheSubscription {
        listeners.add(listener)
    }

    /// Another client of the shared store writes `value` (or removes the key)
    /// and the store reports it.
    func changeElsewhere(_ key: Key, to value: Value?) async {
        storage.withLock { $0[key] = value }
        await listeners.publish(.key(key))
    }

    /// The store is flushed by someone else (or contact with it was lost).
    func flushElsewhere() async {
        storage.withLock { $0.removeAll() }
        await listeners.publish(.all)
    }

    func getIfPresent(_ key: Key) async throws -> Value? {
        calls.withLock { $0.gets += 1 }
        let early = readsFirst.withLock { $0 } ? storage.withLock({ $0[key] }) : nil
        if let gate = gate.withLock({ $0 }) { try await gate.wait() }
        if let error = getFailure.withLock({ $0 }) { throw error }
        return early ?? storage.withLock({ $0[key] })
    }

    func set(_ value: Value, forKey key: Key) async throws {
        calls.withLock { $0.sets += 1 }
        if let gate = setGate.withLock({ $0 }) { try await gate.wait() }
        if let error = setFailure.withLock({ $0 }) { throw error }
        storage.withLock { $0[key] = value }
    }

    func remove(_ key: Key) async throws {
        calls.withLock { $0.removes += 1 }
        _ = storage.withLock { $0.removeValue(forKey: key) }
    }

    func clear() async {
        calls.withLock { $0.clears += 1 }
        storage.withLock { $0.removeAll() }
    }

    func onMemoryWarning() async {
        calls.withLock { $0.memoryWarnings += 1 }
        storage.withLock { $0.removeAll() }
    }
}

struct TestError: Error, Equatable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}
