import Synchronization

/// Striped locks by entry: the disk level's writers (rename into place) and
/// deleters (check, then unlink) of one entry file in this process take the
/// same lock, so a deleter's check stays true until its unlink.
final class EntryLocks: Sendable {
    private final class Stripe: Sendable {
        let mutex = Mutex(())
    }

    private let stripes: [Stripe]

    init(count: Int = 32) {
        stripes = (0..<max(count, 1)).map { _ in Stripe() }
    }

    /// Runs `body` holding the lock of `id`'s stripe. `body` must not suspend
    /// or take another entry's lock (it may take the level's state lock).
    func withLock<T: Sendable>(_ id: EntryID, _ body: () -> T) -> T {
        stripes[Int(id.low % UInt64(stripes.count))].mutex.withLock { _ in body() }
    }
}
