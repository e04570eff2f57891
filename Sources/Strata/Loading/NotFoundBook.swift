import Synchronization

/// The keys a stack's loader found nothing for, each until its deadline and
/// only while no write, clear or reported change has touched it since the
/// load began (the load's ``WriteOrder/Ticket``: a set or remove of the key,
/// through the stack or reported from below, ends it). Bounded: past
/// ``limit`` keys, the book starts over (a miss forgotten costs one load).
final class NotFoundBook: Sendable {
    private struct Entry {
        let ticket: WriteOrder.Ticket
        let until: CacheInstant
    }

    static var limit: Int { 10_000 }
    private let entries = Mutex<[FlightKey: Entry]>([:])

    func remember(_ key: FlightKey, ticket: WriteOrder.Ticket, until: CacheInstant) {
        entries.withLock { entries in
            if entries.count >= Self.limit { entries.removeAll() }
            entries[key] = Entry(ticket: ticket, until: until)
        }
    }

    /// A load found a value for `key`: what was remembered is older.
    func forget(_ key: FlightKey) {
        entries.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// Whether `key` is known to have nothing now.
    func isNotFound(_ key: FlightKey, now: CacheInstant, order: WriteOrder) -> Bool {
        entries.withLock { entries in
            guard let entry = entries[key] else { return false }
            guard now < entry.until, order.isCurrent(entry.ticket) else {
                entries[key] = nil
                return false
            }
            return true
        }
    }
}
