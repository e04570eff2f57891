#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Errors of ``DiskCacheLevel``. Each names the path and, where there is
/// one, the system error.
/// A value the codec cannot encode is a ``CodecError``.
public enum DiskCacheError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The directory is missing and cannot be created, or cannot be read (one
    /// that can be read but not written opens: its writes fail with ``writeFailed(path:errno:)``).
    case directoryNotWritable(path: String, errno: Int32)
    /// Writing an entry failed (disk full, quota, I/O error); nothing was replaced.
    case writeFailed(path: String, errno: Int32)
    /// Reading an entry failed with something other than "not found".
    case readFailed(path: String, errno: Int32)
    /// The encoded entry alone is larger than the level's capacity.
    case valueTooLarge(size: Int, capacity: Int)
    /// The level was shut down (``DiskCacheLevel/shutdown()``): a set or
    /// remove it turns away writes and deletes nothing.
    case shutDown(path: String)

    /// One line naming the path (or the sizes) and the system's reason.
    public var description: String {
        switch self {
        case .directoryNotWritable(let path, let code): "cache directory \(path) is not writable: \(Self.text(code))"
        case .writeFailed(let path, let code): "writing \(path) failed: \(Self.text(code))"
        case .readFailed(let path, let code): "reading \(path) failed: \(Self.text(code))"
        case .valueTooLarge(let size, let capacity): "entry of \(size) bytes exceeds the capacity of \(capacity) bytes"
        case .shutDown(let path): "the disk level on \(path) is shut down"
        }
    }

    static func text(_ code: Int32) -> String { String(cString: strerror(code)) + " (errno \(code))" }
}
