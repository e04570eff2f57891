/// A 4-bit count-min sketch estimating how often each key hash was seen
/// recently (TinyLFU's frequency filter).
///
/// - Each key maps to four 4-bit counters in a table of 64-bit words (16
///   counters a word); its frequency is the smallest of the four, so
///   collisions only ever over-estimate.
/// - Increments are conservative (minimal increment): only the counters at
///   the key's current minimum go up, so a key sharing a counter with a
///   popular one is not inflated by it. Collisions then decide far fewer
///   admission duels, which matters because the counters a key maps to
///   depend on Swift's per-process hash seed: with plain increments a
///   different seed moved the replayed traces' hit ratios by up to a point
///   even with a fixed window.
/// - Counts saturate at 15. After `sampleSize` increments every counter is
///   halved, so the sketch forgets: what was popular long ago fades.
/// - The table is sized to the number of entries the cache holds. Growing it
///   doubles the table by copying it into both halves, so every key keeps its
///   estimate (its counters move to one copy or the other), rather than
///   starting from empty counters while the cache fills.
@usableFromInline
struct FrequencySketch: Sendable {
    @usableFromInline var table: [UInt64]
    @usableFromInline var mask: Int
    /// Increments since the last halving.
    @usableFromInline var additions = 0
    /// Increments between two halvings (ten per table word, as in TinyLFU).
    @usableFromInline var sampleSize: Int

    @usableFromInline static var seeds: (UInt64, UInt64, UInt64, UInt64) {
        (0xC3A5_C85C_97CB_3127, 0xB492_B66F_BE98_F273, 0x9AE1_6A3B_2F90_404F, 0xCBF2_9CE4_8422_2325)
    }

    /// A sketch sized for about `entries` keys.
    @inlinable init(entries: Int) {
        let words = Self.words(for: entries)
        table = [UInt64](repeating: 0, count: words)
        mask = words - 1
        sampleSize = 10 * words
    }

    @inlinable static func words(for entries: Int) -> Int {
        let wanted = min(max(entries, 16), 1 << 22)
        return 1 << (Int.bitWidth - (wanted - 1).leadingZeroBitCount)
    }

    /// Entries the table is sized for.
    @inlinable var capacity: Int { table.count }

    /// Regrows the table when the cache holds more than it was sized for,
    /// keeping every estimate (see the notes above).
    @inlinable mutating func ensureCapacity(_ entries: Int) {
        guard entries > table.count && table.count < 1 << 22 else { return }
        let words = Self.words(for: entries)
        // A counter's word index is `h & mask`: with the wider mask it is the
        // old index or the old index plus the old size, both holding a copy.
        var grown = [UInt64](repeating: 0, count: words)
        for i in 0..<words { grown[i] = table[i & mask] }
        table = grown
        mask = words - 1
        sampleSize = 10 * words
    }

    @inlinable func spread(_ hash: Int, _ seed: UInt64) -> UInt64 {
        var h = (UInt64(UInt(bitPattern: hash)) &+ seed) &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 29
        h = h &* 0xBF58_476D_1CE4_E5B9
        return h ^ (h >> 32)
    }

    /// The word index and bit offset of counter `i` (0...3) for `hash`.
    @inlinable func slot(_ hash: Int, _ i: Int) -> (word: Int, shift: UInt64) {
        let seeds = Self.seeds
        let seed = i == 0 ? seeds.0 : i == 1 ? seeds.1 : i == 2 ? seeds.2 : seeds.3
        let h = spread(hash, seed)
        return (Int(truncatingIfNeeded: h >> 8) & mask, (h & 15) << 2)
    }

    /// The estimated count of `hash` (0...15).
    @inlinable func frequency(_ hash: Int) -> Int {
        var least = 15
        for i in 0..<4 {
            let (word, shift) = slot(hash, i)
            least = min(least, Int((table[word] >> shift) & 15))
        }
        return least
    }

    /// Counts one more occurrence of `hash` (raising only the counters at its
    /// current estimate); halves every counter once `sampleSize` increments
    /// have accumulated.
    @inlinable mutating func increment(_ hash: Int) {
        let s0 = slot(hash, 0), s1 = slot(hash, 1), s2 = slot(hash, 2), s3 = slot(hash, 3)
        let c0 = (table[s0.word] >> s0.shift) & 15, c1 = (table[s1.word] >> s1.shift) & 15
        let c2 = (table[s2.word] >> s2.shift) & 15, c3 = (table[s3.word] >> s3.shift) & 15
        let least = min(min(c0, c1), min(c2, c3))
        guard least < 15 else { return }
        if c0 == least { table[s0.word] &+= 1 << s0.shift }
        // Two slots may share a counter: re-read it so it is raised once.
        if c1 == least && (table[s1.word] >> s1.shift) & 15 == least { table[s1.word] &+= 1 << s1.shift }
        if c2 == least && (table[s2.word] >> s2.shift) & 15 == least { table[s2.word] &+= 1 << s2.shift }
        if c3 == least && (table[s3.word] >> s3.shift) & 15 == least { table[s3.word] &+= 1 << s3.shift }
        additions += 1
        if additions >= sampleSize { halve() }
    }

    /// Halves every counter (the sketch's aging step).
    @inlinable mutating func halve() {
        for i in table.indices { table[i] = (table[i] >> 1) & 0x7777_7777_7777_7777 }
        additions /= 2
    }
}
