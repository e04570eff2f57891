/// What makes two levels the same to the code that orders their writes and
/// drops: the same level object, or a composition of the same levels in the
/// same shape (which shares its ``WriteOrder`` with every other such
/// composition alive: ``SharedWriteOrders``). A level value of any other
/// kind (a struct wrapper, whose closures may act differently) has none.
///
/// A listener compares identities only while the objects they name are alive
/// (their holders hold them), so an address is then never another object's.
/// ``SharedWriteOrders`` may meet the address of a gone object again (a new
/// memory level where a gone one was, whose order a spent listener still
/// holds): it then hands out an order that no live composition uses, which
/// orders nothing but the new composition's own work.
struct LevelIdentity: Hashable, Sendable {
    let address: UInt

    /// `level`'s, if it has one.
    static func of<Level: CacheLevel>(_ level: Level) -> LevelIdentity? {
        if Level.self is AnyObject.Type {
            // A class instance is one reference: no `as AnyObject`, which
            // goes through the runtime's boxing casts (a third of the cost
            // of building a composition).
            return LevelIdentity(address: UInt(bitPattern: ObjectIdentifier(unsafeBitCast(level, to: AnyObject.self))))
        }
        guard let composed = level as? any OrderedComposition else { return nil }
        return LevelIdentity(address: UInt(bitPattern: ObjectIdentifier(composed.writeOrder)))
    }
}

/// A composition, identified by the write order it shares with every
/// composition of the same levels in the same shape.
protocol OrderedComposition {
    var writeOrder: WriteOrder { get }
}
