import Synchronization

/// A shared, lock-free counter a value type can hold (a struct cannot hold an
/// `Atomic` itself and still be copied).
@usableFromInline
final class EventCount: Sendable {
    private let count = Atomic<Int>(0)

    @usableFromInline init() {}

    @usableFromInline func increment() { count.add(1, ordering: .relaxed) }

    @usableFromInline var value: Int { count.load(ordering: .relaxed) }
}
