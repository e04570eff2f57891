import Foundation

/// Errors of ``CacheCodec``s and of the levels that store through them
/// (disk, key-value store, Redis): one type, whichever level stores the bytes.
public enum CodecError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes are not valid UTF-8 text (``CacheCodec/string``).
    case invalidUTF8
    /// The codec named `codec` could not encode the value; nothing was stored.
    case encodingFailed(codec: String, reason: String)
    /// The codec named `codec` could not decode stored bytes.
    case decodingFailed(codec: String, reason: String)

    /// One line naming the codec and the reason, e.g. `json decoding failed: …`.
    public var description: String {
        switch self {
        case .invalidUTF8: "bytes are not valid UTF-8 text"
        case .encodingFailed(let codec, let reason): "\(codec) encoding failed: \(reason)"
        case .decodingFailed(let codec, let reason): "\(codec) decoding failed: \(reason)"
        }
    }
}

extension CacheCodec {
    /// `value` encoded; a failure is ``CodecError/encodingFailed(codec:reason:)``.
    @inlinable
    public func encoded(_ value: Value) throws(CodecError) -> Data {
        do { return try encode(value) } catch { throw CodecError.encodingFailed(codec: name, reason: "\(error)") }
    }

    /// `data` decoded; a failure is ``CodecError/decodingFailed(codec:reason:)``.
    @inlinable
    public func decoded(_ data: Data) throws(CodecError) -> Value {
        do { return try decode(data) } catch { throw CodecError.decodingFailed(codec: name, reason: "\(error)") }
    }
}
