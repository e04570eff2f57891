#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// What a composition's listener is, while the composition registers it
/// with a level (``CacheContext/listenerRegistration``), so that the level's
/// ``InvalidationListeners`` can forget it once it can do nothing more.
///
/// A composition built for one request over long-lived levels leaves its
/// listeners behind when it goes. Without this, each such composition left
/// its listeners for good, and they held its upper level: a memory level
/// built per request over a shared one was never freed, and every report ran
/// through one listener per composition ever built.
/// - The listener on the composition's **upper** level serves the
///   composition's reads, and the pools below it: it is spent once the
///   composition (`owner`) is gone, and every pool (``ReadSharers``).
/// - The listener on its **lower** level keeps `upper` coherent with `lower`
///   after the composition is gone (the next composition over them must not
///   find `upper` stale). It holds `upper` weakly only when `upper`'s store
///   ends with it (a ``MemoryCacheLevel``: ``StoreEndsWithLevel``), and is
///   spent once `upper` is gone; any other `upper` (a disk level, a pool over
///   a long-lived memory level, a composition) may be a handle to a store
///   that outlives it, so the listener holds it and stays. Registered
///   directly with a store's level, it gives way to a newer such listener
///   for the same upper level once its composition is gone.
///
/// A registration is honoured only during the composition's own call to
/// `addInvalidationListener`: a task started inside that call (a level's
/// report loop) inherits the task-local, and whatever it registers later is
/// not the composition's.
@usableFromInline
final class ListenerRegistration: Sendable {
    enum Side: Sendable {
        /// On the composition's upper level; `pools`: the objects in the
        /// lower level that share reads in flight (``ReadSharers``, held weakly).
        case upper(pools: [WeakObject])
        /// On its lower level, for `upper` (`nil`: held by the listener).
        /// `direct`: the lower level is the store itself
        /// (``ReportsItsStoreDirectly``), so the listener reaches it with
        /// nothing between that could change what it reports. `identity`:
        /// the upper level's (``LevelIdentity``), if it has one.
        case lower(upper: WeakObject?, direct: Bool, identity: LevelIdentity?)
    }

    /// The composition's link: alive while the composition or one of its back-fills is.
    let owner: WeakObject
    let side: Side
    private let open = Atomic<Bool>(true)
    /// The thread making the registering call: a task that runs meanwhile
    /// (a report loop the call started) runs on another one.
    private let thread = currentThread()

    init(owner: WeakObject, side: Side) {
        self.owner = owner
        self.side = side
    }

    /// Whether this is the registering call, still under way.
    var isOpen: Bool { open.load(ordering: .acquiring) && thread == currentThread() }

    /// Whether the listener registered under it can do nothing more.
    var isSpent: Bool {
        guard owner.isGone else { return false }
        switch side {
        case .upper(pools: let pools): return pools.allSatisfy(\.isGone)
        case .lower(upper: let upper, _, _): return upper?.isGone ?? false
        }
    }

    /// Whether the listener registered under `newer` does all that the one
    /// registered under this does, and this one's composition is gone: both
    /// drop what the same store reports from the same upper level object
    /// (``LevelIdentity``), with nothing between. The newer one then
    /// takes the older one's place in the list (so the order in which
    /// listeners hear a report is kept).
    func isStoodIn(for newer: ListenerRegistration?) -> Bool {
        guard owner.isGone, case .lower(let upper, true, let identity?) = side,
              case .lower(_, true, let newerIdentity?)? = newer?.side else { return false }
        // An upper level held weakly and gone is spent, not stood in for:
        // its address may be another level's now.
        if let upper, upper.isGone { return false }
        return identity == newerIdentity
    }

    /// Runs `body` (the composition's call to `addInvalidationListener`)
    /// with this registration, which is closed when it returns.
    func registering(_ body: () -> Void) {
        CacheContext.$listenerRegistration.withValue(self, operation: body)
        open.store(false, ordering: .releasing)
    }
}

/// The calling thread's identity, as a plain integer (`pthread_t` is an
/// integer on Linux, a pointer on Darwin).
private func currentThread() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

/// A level over a shared store that reports its changes itself (a disk
/// level, a Redis level): a listener registered with it directly hears
/// exactly what the store reports.
package protocol ReportsItsStoreDirectly: AnyObject {}

/// A level whose store ends with it (nothing else can reach what it holds):
/// a listener keeping it coherent may hold it weakly.
protocol StoreEndsWithLevel: AnyObject {}

/// A weak reference to an object of any class.
@usableFromInline
final class WeakObject: @unchecked Sendable {
    // Safe: `object` is written once, in `init`, before the box is shared,
    // and only loaded afterwards (weak loads are atomic); nothing is read
    // through it here but whether it is still there, or the object itself
    // by its holder.
    weak var object: AnyObject?

    init(_ object: AnyObject) { self.object = object }

    var isGone: Bool { object == nil }
}

extension CacheContext {
    /// Set by a composition around its own registrations; read by
    /// ``InvalidationListeners/add(_:)``.
    @TaskLocal static var listenerRegistration: ListenerRegistration?
}
