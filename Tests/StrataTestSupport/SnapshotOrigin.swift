import Strata
import Synchronization

/// An origin that reads its storage first, then waits until ``open()``: a
/// slow read that began before a change and answers with what was there
/// then. `reads` counts the reads that have taken their snapshot.
public final class SnapshotOrigin: CacheLevel, Sendable {
    private struct Gate {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    public let storage = Mutex<[String: String]>([:])
    public let reads = Atomic<Int>(0)
    private let gate = Mutex(Gate())

    public init() {}

    /// Lets every held read answer, and every later one at once.
    public func open() {
        let waiters = gate.withLock { gate in
            gate.isOpen = true
            defer { gate.waiters = [] }
            return gate.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Holds the reads that begin from now on again, until the next ``open()``.
    public func close() { gate.withLock { $0.isOpen = false } }

    public func getIfPresent(_ key: String) async throws -> String? {
        let snapshot = storage.withLock { $0[key] }
        reads.add(1, ordering: .relaxed)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = gate.withLock { gate in
                if gate.isOpen { return true }
                gate.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
        return snapshot
    }

    public func set(_ value: String, forKey key: String) async throws { storage.withLock { $0[key] = value } }
    public func remove(_ key: String) async throws { _ = storage.withLock { $0.removeValue(forKey: key) } }
    public func clear() async { storage.withLock { $0.removeAll() } }
    public func onMemoryWarning() async {}
}
