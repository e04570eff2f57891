/// What a composition's listener is, while it registers it with a level
/// (``CacheContext/listenerRegistration``), so that the level's
/// ``InvalidationListeners`` can forget it once it can do nothing, or
/// nothing that another listener does not do.
///
/// A composition built for one request over long-lived levels leaves its
/// listeners behind when it goes. Without this, every such composition added
/// one for good: the list grew without bound and each report ran through it.
/// - The listener on the composition's **upper** level serves only the
///   composition's reads: it goes once the composition (its `owner`) has.
/// - The listener on its **lower** level keeps `upper` coherent with `lower`
///   after the composition is gone (the next composition over them must not
///   find `upper` stale). When `upper` is an object, the listener holds it
///   weakly: it goes once `upper` has, and once its composition has gone it
///   gives way to a newer listener for the same `upper`, which does the same.
///   A value-type `upper` (a nested composition, a wrapper) is held by its
///   listener, which stays.
/// Forwarders that change what a report means for the levels above (a key
/// transform, a batch) register theirs as not interchangeable.
@usableFromInline
struct ListenerRegistration: Sendable {
    enum Side: Sendable {
        /// On the composition's upper level.
        case upper
        /// On its lower level, for `upper` (`nil`: a value, held by the
        /// listener). `interchangeable`: it does to `upper` exactly what any
        /// other such listener for `upper` does (drops the reported key),
        /// so a newer one can stand in for it.
        case lower(upper: WeakObject?, interchangeable: Bool)
    }

    /// The composition's link: alive while the composition or one of its back-fills is.
    let owner: WeakObject
    let side: Side
}

/// A weak reference to an object of any class.
@usableFromInline
final class WeakObject: @unchecked Sendable {
    // Safe: `object` is written once, in `init`, before the box is shared,
    // and only loaded afterwards (weak loads are atomic); nothing is read
    // through it here but its identity and whether it is still there.
    weak var object: AnyObject?

    init(_ object: AnyObject) { self.object = object }

    var isGone: Bool { object == nil }
}

extension CacheContext {
    /// Set by a composition around its own registrations; read by
    /// ``InvalidationListeners/add(_:)``.
    @TaskLocal static var listenerRegistration: ListenerRegistration?

    /// Runs `body`, a registration that wraps its caller's listener in one
    /// that reports something else: no other listener can stand in for it.
    static func registeringTranslated<T>(_ body: () throws -> T) rethrows -> T {
        guard let registration = listenerRegistration, case .lower(let upper, true) = registration.side else {
            return try body()
        }
        let translated = ListenerRegistration(owner: registration.owner, side: .lower(upper: upper, interchangeable: false))
        return try $listenerRegistration.withValue(translated, operation: body)
    }
}
