/// Why a trace could not be read. Every case names the file; a bad line also
/// names its line number (counted in the decompressed text, from 1).
public enum TraceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file does not exist.
    case missing(file: String)
    /// The file exists but cannot be read (permissions, a directory, an I/O error).
    case unreadable(file: String, reason: String)
    /// The file holds no requests (empty, or only blank and `*` lines).
    case empty(file: String)
    /// A line that does not follow the format.
    case malformed(file: String, line: Int, reason: String)
    /// The file starts like gzip but does not decompress.
    case badGzip(file: String, reason: String)
    /// The file, or its decompressed text, is longer than `limit` bytes
    /// (``TraceReader/maxBytes``): a trace is read whole into memory.
    case tooLarge(file: String, limit: Int)
    /// The trace has more than `limit` requests (``TraceReader/maxRequests``);
    /// `line` is that of the first request over it.
    case tooManyRequests(file: String, line: Int, limit: Int)

    public var description: String {
        switch self {
        case .missing(let file): "\(file): no such file"
        case .unreadable(let file, let reason): "\(file): cannot read: \(reason)"
        case .empty(let file): "\(file): no requests (the file is empty or has only blank lines)"
        case .malformed(let file, let line, let reason): "\(file):\(line): malformed line: \(reason)"
        case .badGzip(let file, let reason): "\(file): not a readable gzip file: \(reason)"
        case .tooLarge(let file, let limit): "\(file): more than \(limit) bytes of trace text (the most a trace may have)"
        case .tooManyRequests(let file, let line, let limit): "\(file):\(line): more than \(limit) requests (the most a trace may have)"
        }
    }
}
