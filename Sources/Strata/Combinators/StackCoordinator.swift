// # The stack coordinator
//
// `upper + lower` builds a ``ComposedCache``: a value that holds its two
// levels and one `StackCoordinator`, the object that keeps them coherent.
// Every copy of the composition shares the coordinator; it lives for as long
// as a copy or one of its back-fills in flight does. (A longer stack,
// `memory + disk + redis`, is compositions nested to the left, each with
// its coordinator: `(memory + disk)` is the upper level of the outer one.)
//
// ## Order
// One ``WriteOrder`` per coordinator serialises, per key, the composition's
// sets and removes (both levels), its clears (every key) and the landing of
// its back-fills: a back-fill lands only if no write to its key began since
// its read of the lower level began, and no change to the key was reported
// meanwhile; otherwise it is dropped. So a back-fill never undoes a write.
//
// ## Subscriptions
// The coordinator subscribes once to each of its levels
// (``CacheLevel/subscribe(_:)``) and keeps both subscriptions:
// - **lower**: a change made elsewhere (another process, another client)
//   that the lower level reports is dropped from the upper level
//   (``CacheLevel/invalidate(_:)``), ordered as a remove (or a clear) of
//   this composition, and counted in ``invalidationsApplied``;
// - **upper**: a change the upper level reports (a shared store inside it)
//   voids the back-fills into it that began before (``WriteOrder/noteChanged(_:)``)
//   and ends the sharing of the reads in flight below (a pool's), so no
//   get that began after the change is answered with what was read before.
//
// Both listeners hold the coordinator weakly; the levels hold only their
// listeners. So levels never hold each other or the coordinator: when the
// last copy of a composition and its last back-fill are gone, the
// coordinator goes, its subscriptions are cancelled, and the levels only it
// held go too (a disk level releases its watch, a Redis level its
// connections).
//
// ## Writers
// Each coordinator has a writer id, taken from a process-wide counter and
// never reused. A write through the composition runs with its id in the
// task's ``CacheWriteOrigin``; a store that reports its own writes to the
// listeners in this process (a disk level, a Redis level: its store does not
// report them back) hands that origin to them in the ``CacheChange`` it
// delivers (from a detached task: a listener inherits nothing from the
// writer), and a coordinator skips the report of a write it made: its upper
// level holds what was written. Every other coordinator over the store drops
// the key.
//
// ## Lifetimes, and what a stack is for
// A stack keeps its levels coherent while it lives. Build it once, hold it
// for as long as its levels, and ask it per request (`stack.get(key)`). When
// it goes, nothing tells its upper level of the lower one's changes any
// more: if the lower level reports changes, the upper one is told
// (``CacheLevel/lostCoherence()``) and a memory level empties itself, so a
// stack built over it later never serves what changed meanwhile. It is told
// so when the stack is built too: what it holds then was kept while nobody
// may have listened (a process killed before its stack could go). Two stacks
// alive over one upper level would not order their writes against each
// other: the second is warned about (``LiveUpperLevels``), and so is a level
// whose subscriptions come and go many times (``InvalidationListeners``).
import Synchronization

/// Keeps a composition's two levels coherent: the write order, the
/// back-fills, the subscriptions to both levels and the writer id (see the
/// design note at the top of this file).
@usableFromInline
final class StackCoordinator<Upper: CacheLevel, Lower: CacheLevel>: Sendable
where Upper.Key == Lower.Key, Upper.Value == Lower.Value {
    typealias Key = Upper.Key

    let upper: Upper
    let lower: Lower
    /// Never reused in the process (see ``CacheWriteOrigin``).
    let writer = StackWriters.next()
    @usableFromInline let order = WriteOrder()
    @usableFromInline let backfills = BackfillTracker()
    /// Single-flight of the reads of `lower` (see ``ReadFlights``), made by
    /// the first read below: a stack asked only for hits never needs it.
    private let madeFlights = Mutex<ReadFlights<Upper.Value>?>(nil)
    var flights: ReadFlights<Upper.Value> { made(madeFlights) }
    /// Single-flight of the loads of ``ComposedCache/get(_:load:)``, made by the first.
    private let madeLoads = Mutex<ReadFlights<Upper.Value>?>(nil)
    var loads: ReadFlights<Upper.Value> { made(madeLoads) }

    private func made(_ slot: borrowing Mutex<ReadFlights<Upper.Value>?>) -> ReadFlights<Upper.Value> {
        slot.withLock { made in
            if let made { return made }
            let flights = ReadFlights<Upper.Value>(clock: clock)
            made = flights
            return flights
        }
    }
    /// The keys the loader found nothing for (``Loaded/notFound(ttl:)``).
    let notFound = NotFoundBook()
    /// The clock deadlines are judged on: the levels' own (the lower one's first).
    var clock: any CacheClock { levelClock(of: lower) ?? levelClock(of: upper) ?? SystemClock() }

    /// Changes reported by `lower` and applied to `upper`.
    private let applied = Atomic<Int>(0)
    var invalidationsApplied: Int { applied.load(ordering: .relaxed) }
    /// Both subscriptions; cancelled when the coordinator goes.
    private let subscriptions = Mutex<[CacheSubscription]>([])
    /// The upper level's entry among the live stacks' (``LiveUpperLevels``).
    private let liveUpper: ObjectIdentifier?

    init(_ upper: Upper, _ lower: Lower) {
        self.upper = upper
        self.lower = lower
        liveUpper = LiveUpperLevels.enter(upper)
        let fromBelow = lower.subscribe { [weak self] change in await self?.applyFromBelow(change) }
        let fromAbove = upper.subscribe { [weak self] change in self?.noteFromAbove(change) }
        subscriptions.withLock { $0 = [fromBelow, fromAbove] }
        // What `upper` holds now predates this subscription: nobody may have
        // listened to `lower` when it changed (a process killed with -9 never
        // said its stack was gone). Heard from now on, so forgotten now.
        if fromBelow.reportsChanges { upper.lostCoherence() }
    }

    /// Nothing keeps `upper` coherent with `lower` any more: it forgets
    /// what it can rebuild (see ``CacheLevel/lostCoherence()``).
    deinit {
        if let liveUpper { LiveUpperLevels.leave(liveUpper) }
        if subscriptions.withLock({ $0.first?.reportsChanges ?? false }) { upper.lostCoherence() }
    }

    /// The lower level reports a change made elsewhere: the upper level
    /// drops it, as this composition's write, ordered against its writes
    /// and back-fills. A report of this composition's own write is skipped.
    private func applyFromBelow(_ change: CacheChange<Key>) async {
        if change.isWrite(by: writer) { return }
        let invalidation = change.invalidation
        let upper = self.upper
        detachReads(invalidation)
        defer { detachReads(invalidation) }
        // Counted once applied: a caller that sees the count sees the upper level without the key.
        defer { applied.add(1, ordering: .relaxed) }
        // Ordered as a remove of the key, or as a clear.
        var stripe: Int?
        if let key = invalidation.changedKey { stripe = await order.beginWrite(key) } else { await order.beginClear() }
        defer { if let stripe { order.endWrite(stripe) } else { order.endClear() } }
        _ = await CacheContext.writing(as: writer) { await attempt { try await upper.invalidate(invalidation) } }
    }

    /// The upper level reports a change made elsewhere: back-fills into it
    /// whose read began before are dropped, and reads in flight below stop
    /// being shared.
    private func noteFromAbove(_ change: CacheChange<Key>) {
        if change.isWrite(by: writer) { return }
        let invalidation = change.invalidation
        if let key = invalidation.changedKey { order.noteChanged(key) } else { order.noteChangedAll() }
        detachReads(invalidation)
        lower.endSharingReads(invalidation)
    }

    /// New gets of what `invalidation` names start reads (and loads) of their own.
    func detachReads(_ invalidation: CacheInvalidation<Key>) {
        detach(madeFlights, invalidation)
        detach(madeLoads, invalidation)
    }

    /// New gets of what `invalidation` names start reads of the lower level
    /// of their own, but join the load in flight: for a load's own landing,
    /// which writes what that load's joiners are answered.
    func detachReadsBelow(_ invalidation: CacheInvalidation<Key>) {
        detach(madeFlights, invalidation)
    }

    private func detach(_ slot: borrowing Mutex<ReadFlights<Upper.Value>?>, _ invalidation: CacheInvalidation<Key>) {
        guard let flights = slot.withLock({ $0 }) else { return }  // none made yet
        guard let key = invalidation.changedKey else { return flights.detach(nil) }
        if let key = ReadFlights<Upper.Value>.flightKey(key) { flights.detach(key) }
    }
}

/// Writer ids for stacks: a process-wide counter, so an id is never reused.
enum StackWriters {
    private static let last = Atomic<UInt64>(0)

    static func next() -> UInt64 { last.add(1, ordering: .relaxed).newValue }
}
