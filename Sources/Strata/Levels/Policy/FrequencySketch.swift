/// A 4-bit count-min sketch estimating how often each key hash was seen
/// recently (TinyLFU's frequency filter).
///
/// - Each key maps to four 4-bit counters in a table of 64-bit words (16
///   counters a word), all in one 64-byte block of 8 words (one or two cache
///   lines: the array's storage is not line-aligned) and each in a different
///   word; its frequency is the smallest of the
///   four, so collisions only ever over-estimate.
/// - Increments are conservative (minimal increment): only the counters at
///   the key's current minimum go up, so a key sharing a counter with a
///   popular one is not inflated by it. Collisions then decide far fewer
///   admission duels, which matters because the counters a key maps to
///   depend on Swift's per-process hash seed: with plain increments a
///   different seed moved the replayed traces' hit ratios by up to a point
///   even with a fixed window.
/// - Counts saturate at 15. After `sampleSize` increments every counter is
///   halved, so the sketch forgets: what was popular long ago fades.
/// - The table has two words (32 counters) per entry the cache holds, twice
///   Caffeine's: with one, collisions between the counters of keys requested
///   once and those of the cache's victims still decided enough duels that a
///   replay's hit ratio depended on the hash seed (multi2 @ 2000 moved by
///   0.7 points between seeds; with two, 0.1). Growing it doubles the table
///   by copying it into both halves, so every key keeps its estimate (its
///   counters move to one copy or the other), rather than starting from
///   empty counters while the cache fills.
@usableFromInline
struct FrequencySketch: Sendable {
    @usableFromInline var table: [UInt64]
    @usableFromInline var mask: Int
    /// Increments since the last halving.
    @usableFromInline var additions = 0
    /// Increments between two halvings (ten per entry the table is sized
    /// for, as in TinyLFU: five per word).
    @usableFromInline var sampleSize: Int

    @usableFromInline static var seeds: (UInt64, UInt64, UInt64, UInt64) {
        (0xC3A5_C85C_97CB_3127, 0xB492_B66F_BE98_F273, 0x9AE1_6A3B_2F90_404F, 0xCBF2_9CE4_8422_2325)
    }

    /// Table words per entry.
    @inlinable static var wordsPerEntry: Int { 2 }

    /// A sketch sized for about `entries` keys.
    @inlinable init(entries: Int) {
        let words = Self.words(for: max(entries, Self.minimumEntries))
        table = [UInt64](repeating: 0, count: words)
        mask = words - 1
        sampleSize = 10 * Self.words(for: entries) / Self.wordsPerEntry
    }

    /// The table is never sized for fewer entries (8 KB): on a cache of 50
    /// entries a table for 64 put the keys of a trace's whole working set in
    /// eight blocks, and collisions under Swift's per-process hash seed moved
    /// ps @ 50 by 2 points from one process to the next. The aging period
    /// still follows the cache (`sampleSize`), so small caches forget as fast.
    @inlinable static var minimumEntries: Int { 512 }

    @inlinable static func words(for entries: Int) -> Int {
        let wanted = min(max(entries, 16) * wordsPerEntry, 1 << 23)
        return 1 << (Int.bitWidth - (wanted - 1).leadingZeroBitCount)
    }

    /// Entries the table is sized for.
    @inlinable var capacity: Int { (mask + 1) / Self.wordsPerEntry }

    /// Regrows the table when the cache holds more than it was sized for,
    /// keeping every estimate (see the notes above). Checked at every
    /// insert, from `mask` alone; the growing is out of line.
    @inlinable @inline(__always) mutating func ensureCapacity(_ entries: Int) {
        if entries > capacity && mask < (1 << 23) - 1 { grow(for: entries) }
    }

    @inlinable @inline(never) mutating func grow(for entries: Int) {
        let words = Self.words(for: entries)
        // A counter's block is `h & mask`: with the wider mask it is the old
        // block or the old block plus the old size, both holding a copy.
        var grown = [UInt64](repeating: 0, count: words)
        for i in 0..<words { grown[i] = table[i & mask] }
        table = grown
        mask = words - 1
        sampleSize = 10 * words / Self.wordsPerEntry
    }

    @inlinable func spread(_ hash: Int, _ seed: UInt64) -> UInt64 {
        var h = (UInt64(UInt(bitPattern: hash)) &+ seed) &* 0x9E37_79B9_7F4A_7C15
        h ^= h &>> 29
        h = h &* 0xBF58_476D_1CE4_E5B9
        return h ^ (h &>> 32)
    }

    /// The four counters of `hash`, as (word index, bit offset) pairs: one
    /// 64-byte block of 8 words is chosen by one mixed hash, and within it
    /// each counter `i` takes a word of its own pair (words 2i and 2i + 1)
    /// and a nibble, from a byte of a second mix (Caffeine's layout: one
    /// block and two mixes per key, not four).
    @inlinable func slots(_ hash: Int) -> (Int, UInt64, Int, UInt64, Int, UInt64, Int, UInt64) {
        let seeds = Self.seeds
        let h = spread(hash, seeds.0)
        let g = spread(Int(truncatingIfNeeded: h), seeds.1)
        let block = Int(truncatingIfNeeded: h) & mask & ~7
        // Masking shifts (`&>>`, `&<<`): every amount here is below 64, and
        // the checked forms cost a compare and a select each on the hot path.
        @inline(__always) func counter(_ i: Int) -> (Int, UInt64) {
            let byte = g &>> UInt64(i * 8)
            return (block + 2 * i + Int(byte & 1), ((byte &>> 1) & 15) &<< 2)
        }
        let (w0, s0) = counter(0), (w1, s1) = counter(1), (w2, s2) = counter(2), (w3, s3) = counter(3)
        return (w0, s0, w1, s1, w2, s2, w3, s3)
    }

    /// The estimated count of `hash` (0...15).
    @inlinable func frequency(_ hash: Int) -> Int {
        let (w0, s0, w1, s1, w2, s2, w3, s3) = slots(hash)
        return table.withUnsafeBufferPointer { t -> Int in
            let c0: UInt64 = (t[w0] &>> s0) & 15, c1: UInt64 = (t[w1] &>> s1) & 15
            let c2: UInt64 = (t[w2] &>> s2) & 15, c3: UInt64 = (t[w3] &>> s3) & 15
            return Int(min(min(c0, c1), min(c2, c3)))
        }
    }

    /// Counts one more occurrence of `hash` (raising only the counters at its
    /// current estimate); halves every counter once `sampleSize` increments
    /// have accumulated.
    @inlinable mutating func increment(_ hash: Int) {
        let (w0, s0, w1, s1, w2, s2, w3, s3) = slots(hash)
        let raised = table.withUnsafeMutableBufferPointer { t -> Bool in
            let c0: UInt64 = (t[w0] &>> s0) & 15, c1: UInt64 = (t[w1] &>> s1) & 15
            let c2: UInt64 = (t[w2] &>> s2) & 15, c3: UInt64 = (t[w3] &>> s3) & 15
            let least = min(min(c0, c1), min(c2, c3))
            guard least < 15 else { return false }
            // The four counters lie in four different words: each is raised once.
            if c0 == least { t[w0] &+= 1 &<< s0 }
            if c1 == least { t[w1] &+= 1 &<< s1 }
            if c2 == least { t[w2] &+= 1 &<< s2 }
            if c3 == least { t[w3] &+= 1 &<< s3 }
            return true
        }
        guard raised else { return }
        additions += 1
        if additions >= sampleSize { halve() }
    }

    /// Halves every counter (the sketch's aging step).
    @inlinable mutating func halve() {
        for i in table.indices { table[i] = (table[i] >> 1) & 0x7777_7777_7777_7777 }
        additions /= 2
    }
}
