#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A file the explorer could not write (`:save`, `:export`), with why.
struct OutputFileError: Error, CustomStringConvertible {
    let path: String
    let reason: String
    var description: String { "cannot write \(path): \(reason)" }
}

/// Writes the explorer's output files whole or not at all: a temporary file
/// beside the target, then renamed over it (a reader never sees half a
/// file, and a failed write leaves the old one).
enum OutputFile {
    static func save(_ text: String, to path: String) throws(OutputFileError) {
        let target = (path as NSString).expandingTildeInPath
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: target, isDirectory: &isDirectory) && isDirectory.boolValue {
            throw OutputFileError(path: path, reason: "it is a directory")
        }
        let temporary = target + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw OutputFileError(path: path, reason: Self.reason(errno)) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else {
                let code = errno
                close(fd)
                unlink(temporary)
                throw OutputFileError(path: path, reason: Self.reason(code))
            }
            written += result
        }
        close(fd)
        guard rename(temporary, target) == 0 else {
            let code = errno
            unlink(temporary)
            throw OutputFileError(path: path, reason: Self.reason(code))
        }
    }

    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
