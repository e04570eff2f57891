import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads trace files: LIRS, one key per line, or CSV `key[,size]`, plain or
/// gzip-compressed (recognised by its magic bytes, whatever the file name).
///
/// Gzip goes through the system's `gzip -dc`, so no compression library is
/// linked. Integer keys (LIRS) are used as they are; text keys (``TraceFormat/keys``,
/// ``TraceFormat/csv``) are numbered in order of first appearance.
///
/// Every failure is a ``TraceError`` naming the file (and the line, for a bad
/// line); no input makes the reader trap.
///
/// A trace is held whole in memory (the clairvoyant policy needs its future),
/// so the file, its decompressed text and its requests have ceilings
/// (``maxBytes``, ``maxRequests``): a larger trace is a ``TraceError``, not an
/// exhausted machine.
public struct TraceReader: Sendable {
    /// The default ``maxBytes``: 2 GiB, room for 10^8 LIRS requests.
    public static let defaultMaxBytes = 2 << 30

    /// How lines are read.
    public var format: TraceFormat
    /// The most bytes read from a file, and the most its gzip text may
    /// decompress to; beyond is ``TraceError/tooLarge(file:limit:)``.
    public var maxBytes: Int
    /// The most requests a trace may have (by default ``Workload/limit``, as
    /// for generated workloads); beyond is ``TraceError/tooManyRequests(file:line:limit:)``.
    public var maxRequests: Int

    /// A reader for `format` (by default, detected from the first request line).
    public init(format: TraceFormat = .auto, maxBytes: Int = defaultMaxBytes, maxRequests: Int = Workload.limit) {
        self.format = format
        self.maxBytes = maxBytes
        self.maxRequests = maxRequests
    }

    /// Reads the trace at `path`; the error messages name `path` as given.
    public func read(path: String) throws -> Trace {
        try parse(bytes(path: path), file: path, name: Self.displayName(path))
    }

    /// The text of the file at `path`, decompressed when it is gzip (at most
    /// ``maxBytes`` either way); a ``TraceError`` naming `path` when it cannot be read.
    public func bytes(path: String) throws -> [UInt8] {
        let bytes = try Self.readFile(path, limit: maxBytes)
        return Self.isGzip(bytes) ? try Self.gunzip(path, limit: maxBytes) : bytes
    }

    /// Parses already decompressed trace text; `file` names the source in errors.
    public func parse(_ bytes: [UInt8], file: String, name: String? = nil) throws -> Trace {
        guard bytes.count <= maxBytes else { throw TraceError.tooLarge(file: file, limit: maxBytes) }
        var parser = TraceLineParser(file: file, format: format, maxRequests: maxRequests)
        try Self.forEachLine(bytes) { line, number in try parser.consume(line, line: number) }
        return try parser.finish(name: name ?? Self.displayName(file))
    }

    /// Calls `body` with each line of `bytes` (split at `\n`, without it) and
    /// its number, from 1; returns the number of lines.
    @discardableResult
    package static func forEachLine<E: Error>(_ bytes: [UInt8], _ body: (ArraySlice<UInt8>, Int) throws(E) -> Void) throws(E) -> Int {
        var lineNumber = 0
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            lineNumber += 1
            try body(bytes[start..<end], lineNumber)
            start = end + 1
        }
        return lineNumber
    }

    /// `multi1.trace.gz` → `multi1`: the file name without directories and
    /// without `.gz`, `.trace`, `.lirs`, `.csv`, `.txt`.
    public static func displayName(_ path: String) -> String {
        var name = path.split(separator: "/").last.map(String.init) ?? path
        for suffix in [".gz", ".trace", ".lirs", ".csv", ".txt"] where name.hasSuffix(suffix) && name.count > suffix.count {
            name.removeLast(suffix.count)
        }
        return name
    }

    static func isGzip(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B
    }

    /// The whole file (at most `limit` bytes), or a ``TraceError`` saying why not.
    static func readFile(_ path: String, limit: Int) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw TraceError.missing(file: path) }
            throw TraceError.unreadable(file: path, reason: String(cString: strerror(code)))
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            throw TraceError.unreadable(file: path, reason: "it is a directory")
        }
        return try readAll(fd, limit: limit, file: path) { reason in TraceError.unreadable(file: path, reason: reason) }
    }

    /// Everything `fd` gives until end of file; ``TraceError/tooLarge(file:limit:)``
    /// as soon as it passes `limit` (so a file or a decompression that never
    /// ends costs at most `limit` bytes); `failure` for a read error.
    static func readAll(_ fd: Int32, limit: Int, file: String, failure: (String) -> TraceError) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure(String(cString: strerror(errno)))
            }
            if n == 0 { return bytes }
            guard n <= limit - bytes.count else { throw TraceError.tooLarge(file: file, limit: limit) }
            bytes.append(contentsOf: chunk[0..<n])
        }
    }

    /// Decompresses `path` with `gzip -dc`, reading at most `limit` bytes of its output.
    static func gunzip(_ path: String, limit: Int) throws -> [UInt8] {
        guard let gzip = findExecutable("gzip") else {
            throw TraceError.badGzip(file: path, reason: "gzip is not on PATH (it is needed to decompress)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: gzip)
        process.arguments = ["-dc", "--", path]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            throw TraceError.badGzip(file: path, reason: "cannot run \(gzip): \(error)")
        }
        // gzip writes at most a line or two to stderr, far below a pipe's
        // buffer, so draining stdout first cannot deadlock.
        let data: [UInt8]
        do {
            data = try readAll(output.fileHandleForReading.fileDescriptor, limit: limit, file: path) { reason in
                TraceError.badGzip(file: path, reason: "cannot read gzip's output: \(reason)")
            }
        } catch {
            // Over the limit (or unreadable): stop gzip rather than read the rest.
            process.terminate()
            try? output.fileHandleForReading.close()
            process.waitUntilExit()
            throw error
        }
        let message = (try? errors.fileHandleForReading.readToEnd()) ?? Data()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            var reason = String(decoding: message, as: UTF8.self)
                .split(separator: "\n").last.map(String.init) ?? "gzip exited with status \(process.terminationStatus)"
            // "gzip: FILE: unexpected end of file" → "unexpected end of file"
            if let range = reason.range(of: "\(path): ") { reason = String(reason[range.upperBound...]) }
            if reason.hasPrefix("gzip: ") { reason.removeFirst("gzip: ".count) }
            throw TraceError.badGzip(file: path, reason: reason)
        }
        return data
    }

    static func findExecutable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
