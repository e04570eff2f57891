/// What a ``ComposedCache``'s listener on its upper level reaches: the lower
/// level, and the count of invalidations the composition applied.
///
/// The listener a composition registers with `lower` holds `upper` (so that
/// `upper` stays coherent with `lower` for as long as both live, composed or
/// not); the one it registers with `upper` holds this link weakly, and only
/// the composition (every copy of it) holds the link. So two levels that both
/// report changes never hold each other: once the last copy of the
/// composition is gone and nothing else holds `lower`, `lower` is freed (a
/// disk level releases its directory's watch, a Redis level closes its
/// connections), and then `upper` if only `lower` held it.
@usableFromInline
final class CompositionLink<Lower: CacheLevel>: Sendable {
    let lower: Lower
    @usableFromInline let invalidationsApplied = EventCount()

    init(_ lower: Lower) { self.lower = lower }
}
