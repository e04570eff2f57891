import Foundation

/// An encoded image and what its header says: no decoding, no UIKit.
public struct CachedImage: Sendable, Equatable {
    /// The image formats whose headers are read.
    public enum Format: String, Sendable, Equatable {
        /// PNG (size from the `IHDR` chunk).
        case png
        /// JPEG (size from the first start-of-frame marker).
        case jpeg
        /// GIF (size from the logical screen descriptor).
        case gif
        /// WebP: lossy (VP8), lossless (VP8L) or extended (VP8X).
        case webp
    }

    /// The format the header names.
    public let format: Format
    /// The width in pixels, from the header.
    public let width: Int
    /// The height in pixels, from the header.
    public let height: Int
    /// The encoded bytes, unchanged.
    public let data: Data
}

/// Why bytes are not an image this transformer understands.
public enum ImageTransformerError: Error, Equatable, Sendable {
    /// The bytes start as no format read here, or the header is invalid.
    case notAnImage
    /// The bytes start as an image of this format but end before its size.
    case truncated(CachedImage.Format)
}

/// `Data` ⇄ ``CachedImage``: reads PNG, JPEG, GIF and WebP (VP8, VP8L, VP8X)
/// headers for format and size; anything else throws ``ImageTransformerError``.
/// The inverse returns the original bytes.
public struct ImageTransformer: TwoWayTransformer {
    /// The transformer; it has no settings.
    public init() {}

    /// The image in `value` (see ``parse(_:)``).
    public func transform(_ value: Data) async throws -> CachedImage { try Self.parse(value) }
    /// The image's original bytes.
    public func inverseTransform(_ value: CachedImage) async throws -> Data { value.data }

    /// Reads format and size from the header in the first 64 KiB of `data`;
    /// bytes that are not such an image throw ``ImageTransformerError``.
    public static func parse(_ data: Data) throws -> CachedImage {
        let b = [UInt8](data.prefix(64 * 1024))
        func be16(_ i: Int) -> Int { Int(b[i]) << 8 | Int(b[i + 1]) }
        func le16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        func le24(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 }
        func be32(_ i: Int) -> Int { be16(i) << 16 | be16(i + 2) }

        if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            guard b.count >= 24, b[12...15].elementsEqual("IHDR".utf8) else { throw ImageTransformerError.truncated(.png) }
            // The PNG spec allows 1...2^31-1 for each dimension.
            let width = be32(16), height = be32(20)
            guard (1...0x7FFF_FFFF).contains(width), (1...0x7FFF_FFFF).contains(height) else {
                throw ImageTransformerError.notAnImage
            }
            return CachedImage(format: .png, width: width, height: height, data: data)
        }
        if b.starts(with: "GIF87a".utf8) || b.starts(with: "GIF89a".utf8) {
            guard b.count >= 10 else { throw ImageTransformerError.truncated(.gif) }
            return CachedImage(format: .gif, width: le16(6), height: le16(8), data: data)
        }
        if b.count >= 12, b.starts(with: "RIFF".utf8), b[8...11].elementsEqual("WEBP".utf8) {
            guard b.count >= 30 else { throw ImageTransformerError.truncated(.webp) }
            let chunk = String(decoding: b[12...15], as: UTF8.self)
            switch chunk {
            case "VP8 ":
                return CachedImage(format: .webp, width: le16(26) & 0x3FFF, height: le16(28) & 0x3FFF, data: data)
            case "VP8L":
                let bits = Int(b[21]) | Int(b[22]) << 8 | Int(b[23]) << 16 | Int(b[24]) << 24
                return CachedImage(format: .webp, width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1, data: data)
            case "VP8X":
                return CachedImage(format: .webp, width: le24(24) + 1, height: le24(27) + 1, data: data)
            default:
                throw ImageTransformerError.notAnImage
            }
        }
        if b.starts(with: [0xFF, 0xD8]) {
            // Segments are walked over the whole data, not just the first
            // 64 KiB: EXIF and ICC segments before the frame header can be larger.
            let base = data.startIndex, count = data.count
            func byte(_ i: Int) -> UInt8 { data[base + i] }
            func word(_ i: Int) -> Int { Int(byte(i)) << 8 | Int(byte(i + 1)) }
            var i = 2
            // Each step moves on by at least one byte, so this ends within `count` steps.
            while i + 9 < count {
                guard byte(i) == 0xFF else { throw ImageTransformerError.notAnImage }
                let marker = byte(i + 1)
                if marker == 0xFF { i += 1; continue }  // a fill byte before a marker
                if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }
                let length = word(i + 2)  // at most 65,535, including its own two bytes
                guard length >= 2 else { throw ImageTransformerError.notAnImage }
                // Start-of-frame markers carry the size (not DHT C4, JPG C8, DAC CC).
                if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
                    return CachedImage(format: .jpeg, width: word(i + 7), height: word(i + 5), data: data)
                }
                i += 2 + length
            }
            throw ImageTransformerError.truncated(.jpeg)
        }
        throw ImageTransformerError.notAnImage
    }
}
