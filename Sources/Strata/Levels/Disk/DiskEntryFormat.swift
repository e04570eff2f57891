import Foundation

/// The on-disk form of one entry: a fixed 56-byte header, the key, the value.
///
/// ```
/// 0   magic "STRATA\u{1}\n"        8 bytes
/// 8   format version (1)           UInt16 LE
/// 10  expiry check                 UInt16 LE (0 in files of earlier versions)
/// 12  key length                   UInt32 LE
/// 16  value length                 UInt64 LE
/// 24  expires at (ns since 1970)   Int64 LE, 0 = never
/// 32  last access (ns since 1970)  Int64 LE (rewritten in place)
/// 40  created at (ns since 1970)   Int64 LE (unique per write)
/// 48  checksum of key and value    UInt64 LE
/// 56  key bytes, then value bytes
/// ```
/// A file whose magic, version, lengths (against the file size), key,
/// checksum or expiry check do not match is corrupt, truncated or foreign: it
/// reads as a miss. The expiry check (a hash of the expiry field, never 0)
/// keeps a damaged expiry from making an entry live longer; files written
/// before it have 0 there and are read as before, and readers of those
/// versions ignore it.
struct DiskEntryHeader: Equatable {
    static let magic: [UInt8] = Array("STRATA\u{1}\n".utf8)
    static let size = 56
    static let version: UInt16 = 1
    static let lastAccessOffset: Int64 = 32

    var keyLength: Int
    var valueLength: Int
    var expiresAt: Int64
    var lastAccess: Int64
    var createdAt: Int64
    var checksum: UInt64

    var fileSize: Int { Self.size + keyLength + valueLength }

    /// The expiry check of `expiresAt`: a 16-bit hash, never 0.
    static func expiryCheck(_ expiresAt: Int64) -> UInt16 {
        let check = withUnsafeBytes(of: expiresAt.littleEndian) {
            UInt16(truncatingIfNeeded: StableHash.hash($0, seed: 0xC0FF_EE02))
        }
        return check == 0 ? 1 : check
    }

    static func checksum(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> UInt64 {
        StableHash.hash(key, seed: 0xC0FF_EE00) &* 31 ^ StableHash.hash(value, seed: 0xC0FF_EE01)
    }

    /// The whole file for `key` and `value`. `createdAt` must differ between
    /// writes (see ``EntryFingerprint/nextCreationTime()``): it tells versions apart.
    static func encode(key: [UInt8], value: Data, expiresAt: Int64, now: Int64, createdAt: Int64) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(size + key.count + value.count)
        out += magic
        append(&out, version)
        append(&out, expiryCheck(expiresAt))
        append(&out, UInt32(key.count))
        append(&out, UInt64(value.count))
        append(&out, expiresAt)
        append(&out, now)
        append(&out, createdAt)
        let sum = key.withUnsafeBytes { k in value.withUnsafeBytes { v in checksum(key: k, value: v) } }
        append(&out, sum)
        out += key
        out += value
        return out
    }

    private static func append<T: FixedWidthInteger>(_ out: inout [UInt8], _ value: T) {
        withUnsafeBytes(of: value.littleEndian) { out += $0 }
    }

    /// Parses a header; `nil` when the bytes are not one of ours.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> DiskEntryHeader? {
        guard bytes.count >= size, magic.elementsEqual(bytes.prefix(8)) else { return nil }
        func read<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        guard read(8, UInt16.self) == version else { return nil }
        let keyLength = Int(read(12, UInt32.self))
        let valueLength = read(16, UInt64.self)
        guard valueLength < UInt64(Int.max / 2) else { return nil }
        let expiresAt = read(24, Int64.self), check = read(10, UInt16.self)
        guard check == 0 || check == expiryCheck(expiresAt) else { return nil }
        return DiskEntryHeader(
            keyLength: keyLength, valueLength: Int(valueLength),
            expiresAt: expiresAt, lastAccess: read(32, Int64.self),
            createdAt: read(40, Int64.self), checksum: read(48, UInt64.self)
        )
    }
}
