import Synchronization

/// One ``WriteOrder`` for every composition of the same two levels (by
/// ``LevelIdentity``) alive at once.
///
/// Compositions are often built more than once over the same levels: one
/// per request, or one in each part of a program handed the same levels.
/// With an order each, a write through one did not stop a back-fill of
/// another begun before it, which then landed the value the write had
/// replaced; and a listener a gone composition left behind could not give
/// way to a newer one's, whose drops its kept copies' back-fills would not
/// see. Sharing the order makes them one composition to the levels: writes
/// serialise per key across them, a back-fill of any is dropped by a write
/// through any, and a store's report of a write through one is skipped by
/// all (their upper level holds what was written).
///
/// Levels without an identity (a struct wrapper in between, an erased
/// level) get an order of their own, as before. Entries hold their orders
/// weakly; the table drops dead ones as it grows.
enum SharedWriteOrders {
    private struct Key: Hashable {
        let upper: LevelIdentity
        let lower: LevelIdentity
    }

    private struct Entry {
        weak var order: WriteOrder?
    }

    private struct Table {
        var entries: [Key: Entry] = [:]
        /// The size at which dead entries are next swept.
        var sweepAt = 64
    }

    private static let table = Mutex(Table())

    /// The order for a composition of levels with these identities (a
    /// fresh one if either has none).
    static func order(upper upperIdentity: LevelIdentity?, lower lowerIdentity: LevelIdentity?) -> WriteOrder {
        guard let upperIdentity, let lowerIdentity else { return WriteOrder() }
        let key = Key(upper: upperIdentity, lower: lowerIdentity)
        if let order = table.withLock({ $0.entries[key]?.order }) { return order }
        // Made outside the lock (it allocates its stripes); released outside
        // it if another thread got in first.
        let fresh = WriteOrder()
        return table.withLock { table in
            if let order = table.entries[key]?.order { return order }
            table.entries[key] = Entry(order: fresh)
            if table.entries.count >= table.sweepAt {
                table.entries = table.entries.filter { $0.value.order != nil }
                table.sweepAt = max(64, table.entries.count * 2)
            }
            return fresh
        }
    }

    /// Orders in the table, live or not yet swept (tests).
    static var count: Int { table.withLock { $0.entries.count } }
}
