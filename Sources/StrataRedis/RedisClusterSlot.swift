/// Redis Cluster's key slots: a key's slot is CRC16 (XMODEM) of the key, or
/// of its hash tag, modulo 16384. The hash tag is what lies between the
/// first `{` and the first `}` after it, when that is not empty: `{user:7}:name`
/// and `{user:7}:mail` share a slot, so one script or `MGET` may touch both.
public enum RedisClusterSlot {
    /// Slots in a cluster.
    public static let count = 16384

    /// The slot of the Redis key `name` (its hash tag's, if it has one).
    public static func of(_ name: some Collection<UInt8>) -> Int {
        Int(crc16(hashedPart(of: name)) & UInt16(count - 1))
    }

    /// The part of `name` that is hashed: its hash tag, or all of it.
    static func hashedPart<C: Collection<UInt8>>(of name: C) -> C.SubSequence {
        guard let open = name.firstIndex(of: UInt8(ascii: "{")) else { return name[...] }
        let start = name.index(after: open)
        guard let close = name[start...].firstIndex(of: UInt8(ascii: "}")), close != start else { return name[...] }
        return name[start..<close]
    }

    /// CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), as the cluster specification uses.
    public static func crc16(_ bytes: some Sequence<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes { crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)] }
        return crc
    }

    private static let table: [UInt16] = (0..<256).map { index in
        var crc = UInt16(index) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        return crc
    }

    /// A short hash tag (`{…}` included) that puts a key in `slot`: the level's
    /// tombstones carry the tag of the key they cover, so one script can
    /// read both in a cluster.
    static func hashTag(forSlot slot: Int) -> [UInt8] { tags[slot] }

    /// For each slot, the first string of letters and digits (shortest
    /// first) whose CRC16 lands in it; made once, on first use (about
    /// 240,000 CRCs of 3 bytes).
    private static let tags: [[UInt8]] = {
        let alphabet = Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        var found = [[UInt8]?](repeating: nil, count: count)
        var missing = count
        var candidate: [UInt8] = []
        // Lengths 1, 2, 3, … until every slot has a tag (3 suffices; checked by a test).
        var length = 1
        while missing > 0 {
            var digits = [Int](repeating: 0, count: length)
            candidate = [UInt8](repeating: alphabet[0], count: length)
            while true {
                let slot = Int(crc16(candidate) & UInt16(count - 1))
                if found[slot] == nil {
                    found[slot] = [UInt8(ascii: "{")] + candidate + [UInt8(ascii: "}")]
                    missing -= 1
                }
                var position = length - 1
                while position >= 0 {
                    digits[position] += 1
                    if digits[position] < alphabet.count { break }
                    digits[position] = 0
                    candidate[position] = alphabet[0]
                    position -= 1
                }
                if position < 0 { break }
                candidate[position] = alphabet[digits[position]]
            }
            length += 1
        }
        return found.map { $0! }
    }()
}
