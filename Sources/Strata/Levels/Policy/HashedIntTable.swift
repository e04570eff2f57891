/// A map from key hashes (already well mixed: Swift's seeded `hashValue`) to
/// positive integers, in one open-addressed table with linear probing and
/// backward-shift deletion.
///
/// `Dictionary<Int, Int>` hashes its keys again with SipHash, which made each
/// ghost-list look-up of the adaptive policy cost several hundred
/// instructions; here a look-up is a mask and a short probe. A key and its
/// value share a slot (and a cache line): with keys and values in two arrays
/// a probe missed twice, and these look-ups run on every miss of the level.
@usableFromInline
struct HashedIntTable: Sendable {
    @usableFromInline struct Slot: Sendable {
        @usableFromInline var key: Int
        /// 0 marks an empty slot (stored values are positive).
        @usableFromInline var value: Int
        @inlinable init(key: Int, value: Int) {
            self.key = key
            self.value = value
        }
    }

    @usableFromInline var slots: [Slot]
    @usableFromInline var mask: Int
    @usableFromInline private(set) var count = 0

    @inlinable init(capacity: Int = 16) {
        let size = max(16, 1 << (Int.bitWidth - (max(capacity, 8) * 2 - 1).leadingZeroBitCount))
        slots = [Slot](repeating: Slot(key: 0, value: 0), count: size)
        mask = size - 1
    }

    @inlinable func home(_ key: Int) -> Int { (key ^ (key >> 29)) & mask }

    /// The slot holding `key`, or the empty slot where it would go.
    @inlinable func slot(_ key: Int) -> Int {
        slots.withUnsafeBufferPointer { slots in
            var i = home(key)
            while slots[i].value != 0 && slots[i].key != key { i = (i + 1) & mask }
            return i
        }
    }

    @inlinable subscript(key: Int) -> Int? {
        let i = slot(key)
        let value = slots[i].value
        return value == 0 ? nil : value
    }

    /// Stores `value` (> 0) for `key`.
    @inlinable mutating func set(_ key: Int, _ value: Int) {
        precondition(value > 0, "HashedIntTable stores positive values")
        var i = slot(key)
        if slots[i].value == 0 {
            if (count + 1) * 2 > slots.count {
                grow()
                i = slot(key)
            }
            count += 1
            slots[i].key = key
        }
        slots[i].value = value
    }

    /// Removes `key`; returns its value, if it was there.
    @discardableResult
    @inlinable mutating func remove(_ key: Int) -> Int? {
        remove(key, onlyIf: nil)
    }

    /// Removes `key` if its value is `expected` (any value when nil), in one
    /// probe; returns the value it had, if it was there (removed or not).
    @discardableResult
    @inlinable mutating func remove(_ key: Int, onlyIf expected: Int?) -> Int? {
        let mask = mask
        let home = { (key: Int) in (key ^ (key >> 29)) & mask }
        let (found, removed) = slots.withUnsafeMutableBufferPointer { slots -> (Int?, Bool) in
            var hole = home(key)
            while slots[hole].value != 0 && slots[hole].key != key { hole = (hole + 1) & mask }
            let value = slots[hole].value
            guard value != 0 else { return (nil, false) }
            if let expected, expected != value { return (value, false) }
            // Backward shift: move later members of the probe run into the
            // hole when their home slot does not lie strictly between the
            // hole and them.
            var next = (hole + 1) & mask
            while slots[next].value != 0 {
                let wanted = home(slots[next].key)
                let between = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
                if !between {
                    slots[hole] = slots[next]
                    hole = next
                }
                next = (next + 1) & mask
            }
            slots[hole].value = 0
            return (value, true)
        }
        if removed { count -= 1 }
        return found
    }

    @inlinable mutating func grow() {
        let old = slots
        self = HashedIntTable(capacity: slots.count)
        for slot in old where slot.value != 0 { set(slot.key, slot.value) }
    }
}
