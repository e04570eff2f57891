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

    public var description: String {
        switch self {
        case .missing(let file): "\(file): no such file"
        case .unreadable(let file, let reason): "\(file): cannot read: \(reason)"
        case .empty(let file): "\(file): no requests (the file is empty or has only blank lines)"
        case .malformed(let file, let line, let reason): "\(file):\(line): malformed line: \(reason)"
        case .badGzip(let file, let reason): "\(file): not a readable gzip file: \(reason)"
        }
    }
}
