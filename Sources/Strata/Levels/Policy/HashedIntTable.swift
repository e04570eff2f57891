/// A map from key hashes (already well mixed: Swift's seeded `hashValue`) to
/// positive integers, in one open-addressed table with linear probing and
/// backward-shift deletion.
///
/// `Dictionary<Int, Int>` hashes its keys again with SipHash, which made each
/// ghost-list look-up of the adaptive policy cost several hundred
/// instructions; here a look-up is a mask and a short probe.
@usableFromInline
struct HashedIntTable: Sendable {
    @usableFromInline var keys: [Int]
    /// 0 marks an empty slot (stored values are positive).
    @usableFromInline var values: [Int]
    @usableFromInline var mask: Int
    @usableFromInline private(set) var count = 0

    @inlinable init(capacity: Int = 16) {
        let size = max(16, 1 << (Int.bitWidth - (max(capacity, 8) * 2 - 1).leadingZeroBitCount))
        keys = [Int](repeating: 0, count: size)
        values = [Int](repeating: 0, count: size)
        mask = size - 1
    }

    @inlinable func home(_ key: Int) -> Int { (key ^ (key >> 29)) & mask }

    /// The slot holding `key`, or the empty slot where it would go.
    @inlinable func slot(_ key: Int) -> Int {
        var i = home(key)
        while values[i] != 0 && keys[i] != key { i = (i + 1) & mask }
        return i
    }

    @inlinable subscript(key: Int) -> Int? {
        let i = slot(key)
        return values[i] == 0 ? nil : values[i]
    }

    /// Stores `value` (> 0) for `key`.
    @inlinable mutating func set(_ key: Int, _ value: Int) {
        precondition(value > 0, "HashedIntTable stores positive values")
        var i = slot(key)
        if values[i] == 0 {
            if (count + 1) * 2 > values.count {
                grow()
                i = slot(key)
            }
            count += 1
            keys[i] = key
        }
        values[i] = value
    }

    /// Removes `key`; returns its value, if it was there.
    @discardableResult
    @inlinable mutating func remove(_ key: Int) -> Int? {
        var hole = slot(key)
        let removed = values[hole]
        guard removed != 0 else { return nil }
        count -= 1
        // Backward shift: move later members of the probe run into the hole
        // when their home slot does not lie strictly between the hole and them.
        var next = (hole + 1) & mask
        while values[next] != 0 {
            let wanted = home(keys[next])
            let between = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if !between {
                keys[hole] = keys[next]
                values[hole] = values[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        values[hole] = 0
        return removed
    }

    @inlinable mutating func grow() {
        let old = (keys, values)
        self = HashedIntTable(capacity: values.count)
        for (key, value) in zip(old.0, old.1) where value != 0 { set(key, value) }
    }
}
