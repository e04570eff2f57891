/// Chooses the admission window's share of the cache from ghost hits: ARC's
/// adaptation, applied to W-TinyLFU's window.
///
/// It remembers the hashes of the latest entries that left the cache from
/// the window side (candidates that lost their duel, window entries evicted)
/// and from the main region (victims), up to a quarter of the entries held
/// for each. A miss on a key the window recently let go says a larger window
/// would have hit; a miss on one the main region recently evicted says a
/// larger main region would have. Each such miss moves the share by 0.8 of
/// an entry toward that side, if the key left no more exits ago than the
/// shorter list holds (at least 32): the two sides are weighed over the same
/// depth, the extra entries each would have needed to keep the key.
///
/// It used ARC's rule before (each ghost hit scaled by the other list's size
/// over this one's, when larger, and counted at any depth). In W-TinyLFU the
/// two sides let keys go at very different rates (the window side at every
/// rejected admission, main only when a candidate wins), so one list was
/// often full and the other nearly empty, and a single hit on the short one
/// moved the share by tens of entries: on multi2 @ 2000 it leapt from 4% to
/// 0 within a thousand requests, and the replay's hit ratio moved by 0.7
/// points with the hash seed.
///
/// It replaces a hill climber (Caffeine's scheme), which compared the hit
/// ratios of successive samples of requests. On real traces the hit ratio
/// moves between samples by far more than a window change explains (sprite
/// swings by ±10 points from one 5,000-request sample to the next), so the
/// climber's direction was close to a coin toss, settled by differences as
/// small as the sketch's collisions under Swift's per-process hash seed: hit
/// ratios moved by up to 3 points from one process to the next, and a
/// recency-heavy trace reached a large window too late. Ghost hits weigh both
/// choices over the same requests, so noise in the workload cancels out.
///
/// Ghosts alone cannot see what the window's growth costs main when main
/// evicts nothing: in a loop a little longer than the cache, every candidate
/// loses its duel, so only window ghosts are ever hit (11 exits deep at
/// 1,001 entries over 1,011 keys), the share climbed to 1 and the level
/// became LRU, which hits nothing on a loop (3.7% where W-TinyLFU has 97%);
/// on sprite at 50–200 entries the window grew the same way and lost 2.5–9
/// points. So while main's ghost list holds fewer than `minimumDepth` keys,
/// hits in probation (main's least recent part, which a larger window would
/// take) pull the share back: hits per entry of main's tail against ghost
/// hits per entry of depth (`recordProbationHit`). Once main evicts, its
/// ghosts speak for it and probation hits are ignored (counting them always
/// cost sprite @ 1000 up to 3 points: the window it needs is large). The
/// share never falls below 1% (`minimumShare`).
///
/// The cost is on misses (two look-ups in `HashedIntTable`s, and one
/// insertion per eviction) and on hits in probation (a compare, and a
/// division while main's ghosts are few); other hits do not touch it.
@usableFromInline
struct WindowAdapter: Sendable {
    @usableFromInline static var initialShare: Double { 0.01 }
    /// Entries the window gains or loses per ghost hit (before ARC's ratio).
    @usableFromInline static var step: Double { 0.8 }
    /// Ghost hits are counted up to at least this many exits deep.
    @usableFromInline static var minimumDepth: Int { 32 }
    /// The window never shrinks below this share (a few entries on a small
    /// cache): with no window, a key requested twice in a row duels at once
    /// with a count of one and is declined (multi1 @ 500 fell from 55 to 48).
    @usableFromInline static var minimumShare: Double { 0.01 }
    /// A probation hit weighs this many ghost hits' worth of density (see
    /// ``recordProbationHit(probation:entries:)``).
    @usableFromInline static var probationHitWeight: Double { 2 }
    /// Each ghost list remembers this share of the entries held (at least
    /// 16): one entry in `ghostDivisor`.
    @usableFromInline static var ghostDivisor: Int { 4 }

    /// The window's current share of the capacity (0...1; at 1 the level is plain LRU).
    @usableFromInline var share = WindowAdapter.initialShare
    /// Keys that left from the window side: a larger window would have kept them.
    @usableFromInline var windowGhosts = GhostList()
    /// Keys evicted from the main region: a larger main region would have kept them.
    @usableFromInline var mainGhosts = GhostList()

    /// The least share: `minimumShare`, and one and a half of the `slots`
    /// the level holds at most (a 50-entry cache keeps a window of one
    /// entry, as W-TinyLFU does, not 1% of 50 rounded down to none). From
    /// the capacity, not the entries held: while the level fills, a floor
    /// from its count held the window at 10% and more (multi2 @ 1000 lost a
    /// point).
    @usableFromInline var least = WindowAdapter.minimumShare

    @inlinable init() {}

    /// An adapter for a level of at most `slots` entries (or cost units).
    @inlinable init(slots: Int) {
        resize(slots: slots)
    }

    /// The floor for a level now of at most `slots` entries (resized in
    /// place); the share rises to it if below.
    @inlinable mutating func resize(slots: Int) {
        least = max(Self.minimumShare, 1.5 / Double(max(slots, 1)))
        share = max(share, least)
    }

    /// A miss on `hash` while the level holds `entries` entries.
    @inlinable mutating func recordMiss(_ hash: Int, entries: Int) {
        let entries = max(entries, 16)
        // One entry in `ghostDivisor`, in integers (a quarter: a shift).
        let limit = max(16, entries / Self.ghostDivisor)
        windowGhosts.ensureLimit(limit)
        mainGhosts.ensureLimit(limit)
        let depth = max(min(windowGhosts.count, mainGhosts.count), Self.minimumDepth)
        if let exits = windowGhosts.remove(hash) {
            if exits < depth { move(by: Self.step / Double(entries)) }
        } else if let exits = mainGhosts.remove(hash) {
            if exits < depth { move(by: -Self.step / Double(entries)) }
        }
    }

    /// A hit on one of the `probation` entries (main's least recent part)
    /// while the level holds `entries`: main would lose such hits if the
    /// window took its room. Counted only while main has evicted too few
    /// keys for its ghosts to say so (fewer than `minimumDepth`): then it
    /// moves the share toward main by `probationHitWeight` × `minimumDepth` /
    /// `probation` ghost hits' worth, so hits per entry of main's tail are
    /// weighed against window ghost hits per entry of depth.
    @inlinable mutating func recordProbationHit(probation: Int, entries: Int) {
        // Main's own ghosts speak for it once it evicts (see the notes above).
        guard mainGhosts.count < Self.minimumDepth else { return }
        let entries = max(entries, 16)
        let weight = Self.probationHitWeight * Double(Self.minimumDepth) / Double(max(probation, 1))
        move(by: -Self.step * weight / Double(entries))
    }

    /// `hash` left the cache, from the window side or from the main region.
    @inlinable mutating func recordExit(_ hash: Int, fromWindow: Bool) {
        if fromWindow { windowGhosts.add(hash) } else { mainGhosts.add(hash) }
    }

    @inlinable mutating func move(by amount: Double) {
        share = min(max(share + amount, least), 1)
    }
}

/// The hashes of the latest keys that left the cache one way, at most
/// `limit` of them (ARC's ghost list); the oldest are forgotten first.
///
/// The exits are numbered; exit `n` is kept in a ring at `n & mask`, so the
/// oldest to forget is found without a queue (a `Deque` cost about 60
/// instructions per exit in checks and generic code, on every eviction).
/// Raising the limit past the ring's size moves the kept exits into a ring
/// twice as large (rare: the limit follows the level's size).
@usableFromInline
struct GhostList: Sendable {
    /// Exit `n`'s hash at `n & mask`, for the latest `min(sequence, limit)` exits.
    @usableFromInline var ring: [Int]
    @usableFromInline var mask: Int
    /// Exits so far (the newest one's number).
    @usableFromInline var sequence = 0
    /// Each member's latest exit number (a hash added twice is one member).
    @usableFromInline var members = HashedIntTable()
    @usableFromInline var limit = 16

    @inlinable init() {
        ring = [Int](repeating: 0, count: 16)
        mask = 15
    }

    @inlinable var count: Int { members.count }

    /// Adds `hash` as the newest member, forgetting the oldest beyond `limit`.
    @inlinable mutating func add(_ hash: Int) {
        sequence += 1
        members.set(hash, sequence)
        let oldest = sequence - limit  // leaves now, if it was ever added
        let mask = mask
        ring.withUnsafeMutableBufferPointer { ring in
            if oldest > 0 {
                // Only if not added again since (one probe).
                members.remove(ring[oldest & mask], onlyIf: oldest)
            }
            ring[sequence & mask] = hash
        }
    }

    /// If `hash` is a member, how many keys were added after it (0 for the
    /// newest); it stops being one.
    @inlinable mutating func remove(_ hash: Int) -> Int? {
        members.remove(hash).map { sequence - $0 }
    }

    /// Raises the limit (it never shrinks).
    @inlinable @inline(__always) mutating func ensureLimit(_ newLimit: Int) {
        if newLimit > limit { raiseLimit(newLimit) }
    }

    @inlinable @inline(never) mutating func raiseLimit(_ newLimit: Int) {
        if newLimit > ring.count {
            let size = 1 << (Int.bitWidth - (newLimit - 1).leadingZeroBitCount)
            var grown = [Int](repeating: 0, count: size)
            for n in max(1, sequence - limit + 1)...max(1, sequence) where n <= sequence {
                grown[n & (size - 1)] = ring[n & mask]
            }
            ring = grown
            mask = size - 1
        }
        limit = newLimit
    }
}
