/// The objects inside a level that share reads in flight (``PooledCache``s),
/// held weakly, and what ends their sharing (``CacheLevel/readSharers``).
///
/// A composition whose upper level reports a change ends the sharing of the
/// reads in flight below it (``CacheLevel/endSharingReads(_:)``), so that no
/// get that arrives after the change joins a read begun before it. A pool can
/// outlive the composition and serve later ones, built per request: the
/// listener the composition left on its upper level then reaches the pool
/// through this, whatever the pool sits in (erased, transformed, composed,
/// switched), and goes once every pool named here has. It holds nothing else
/// of the lower level: holding that would make two levels that both report
/// changes (`disk + redis`) hold each other.
///
/// Wrappers forward their inner level's (translated to "every key" when the
/// keys are not the same); a composition and a ``SwitchCache`` join both
/// sides'; ``CacheLevel/normalize()`` keeps them.
public struct ReadSharers<Key: Sendable>: Sendable {
    struct Member: Sendable {
        let object: WeakObject
        /// Ends the member's sharing; does nothing once it is gone.
        let end: @Sendable (CacheInvalidation<Key>) -> Void
    }

    let members: [Member]

    init(members: [Member]) { self.members = members }

    /// Nothing in the level shares reads.
    public static var none: Self { Self(members: []) }

    /// `pool`, a level object whose ``CacheLevel/endSharingReads(_:)`` ends
    /// the sharing of its reads in flight.
    public init<Pool: CacheLevel & AnyObject>(_ pool: Pool) where Pool.Key == Key {
        members = [Member(object: WeakObject(pool), end: { [weak pool] invalidation in
            pool?.endSharingReads(invalidation)
        })]
    }

    /// `level`, an object that shares reads and names no pools inside it
    /// (a user's own): it ends its sharing itself.
    init<Level: CacheLevel>(levelObject level: Level) where Level.Key == Key {
        let object = WeakObject(level as AnyObject)
        members = [Member(object: object, end: { invalidation in
            (object.object as? Level)?.endSharingReads(invalidation)
        })]
    }

    /// These and `other`'s.
    public func merging(_ other: Self) -> Self { Self(members: members + other.members) }

    /// These, for a level whose keys translate into `Key`: any change ends
    /// the sharing of every read.
    public func endingEveryRead<Outer: Sendable>() -> ReadSharers<Outer> {
        ReadSharers<Outer>(members: members.map { member in
            .init(object: member.object, end: { _ in member.end(.all) })
        })
    }

    /// Whether nothing is named.
    public var isEmpty: Bool { members.isEmpty }

    /// The objects named, held weakly.
    var objects: [WeakObject] { members.map { $0.object } }  // (a key path here cost ~1 µs a composition)

    /// Ends the sharing of every named pool that is still there.
    public func endSharingReads(_ invalidation: CacheInvalidation<Key>) {
        for member in members { member.end(invalidation) }
    }
}

extension CacheLevel {
    /// ``readSharers``; for a level object that shares reads but names no
    /// pools (a user's own class, written before the requirement), the
    /// level itself. What compositions, wrappers and ``normalize()`` pass on.
    @usableFromInline
    var readSharersOrSelf: ReadSharers<Key> {
        let named = readSharers
        guard named.isEmpty, sharesReadsInFlight, Self.self is AnyObject.Type else { return named }
        return ReadSharers(levelObject: self)
    }
}
