/// What a ``ComposedCache``'s listeners reach of it once registered with its
/// levels: the lower level and the count of invalidations
/// the composition applied.
///
/// Only the composition (every copy of it) and its back-fills in flight hold
/// the link; the listeners hold it weakly. The listener on `lower` holds
/// `upper` itself, so that `upper` stays coherent with `lower` for as long as
/// both live, composed or not; the one on `upper` reaches `lower` only
/// through the link. So two levels that both report changes never hold each
/// other through one composition: once its last copy and last back-fill are
/// gone and nothing else holds `lower`, `lower` is freed (a disk level
/// releases its directory's watch, a Redis level closes its connections),
/// and then `upper` if only `lower` held it. A listener left behind is a small
/// closure: the one on `lower` still drops what `lower` reports from `upper`.
@usableFromInline
final class CompositionLink<Lower: CacheLevel>: Sendable {
    let lower: Lower
    @usableFromInline let invalidationsApplied = EventCount()

    init(_ lower: Lower) { self.lower = lower }
}

/// A level as a listener holds it: weakly if its store ends with it (a
/// ``MemoryCacheLevel``), else itself.
@usableFromInline
struct HeldLevel<Level: CacheLevel>: Sendable {
    private let value: Level?
    let weakObject: WeakObject?

    init(_ level: Level) {
        if let object = level as? any StoreEndsWithLevel {
            value = nil
            weakObject = WeakObject(object)
        } else {
            value = level
            weakObject = nil
        }
    }

    /// The level, unless it was an object and is gone.
    var level: Level? {
        if let value { return value }
        return weakObject?.object.map { $0 as! Level }
    }
}
