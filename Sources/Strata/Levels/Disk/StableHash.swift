/// Process-independent 64-bit hashing of bytes (Swift's `Hasher` is seeded per
/// process, so it cannot name files). Word-at-a-time multiply-xorshift mixing;
/// not cryptographic: file-name collisions are detected by the stored key.
enum StableHash {
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
        var h = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            h = mix(h ^ mix(word))
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        return mix(h ^ mix(tail ^ 0xFF51_AFD7_ED55_8CCD))
    }

    static func hash(_ bytes: [UInt8], seed: UInt64) -> UInt64 {
        bytes.withUnsafeBytes { hash($0, seed: seed) }
    }

    @inline(__always) static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A 128-bit name for an entry, derived from its key's bytes.
struct EntryID: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(keyBytes: [UInt8]) {
        high = StableHash.hash(keyBytes, seed: 0x5354_5241_5441_0001)
        low = StableHash.hash(keyBytes, seed: 0x5354_5241_5441_0002)
    }

    /// The ID named by exactly 32 lowercase hex digits and `.entry`, the form
    /// ``fileName`` writes; any other name (`+` or `-` signs, which
    /// `UInt64(_:radix:)` would accept, upper case, other lengths) is not an
    /// entry of this level and is left alone.
    init?(fileName: String) {
        let bytes = Array(fileName.utf8)
        let suffix = Array(".entry".utf8)
        guard bytes.count == 32 + suffix.count, bytes[32...].elementsEqual(suffix) else { return nil }
        func value(_ digits: ArraySlice<UInt8>) -> UInt64? {
            var result: UInt64 = 0
            for byte in digits {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                default: return nil
                }
                result = result << 4 | UInt64(digit)
            }
            return result
        }
        guard let high = value(bytes[0..<16]), let low = value(bytes[16..<32]) else { return nil }
        self.high = high
        self.low = low
    }

    var fileName: String { Self.hex(high) + Self.hex(low) + ".entry" }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
