#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why ``SmallFile/contents(of:limit:)`` gave no bytes.
package enum SmallFileError: Error, Equatable, Sendable {
    /// `open` failed with this errno (`ENOENT`, `EACCES`, …).
    case cannotOpen(errno: Int32)
    /// Not a regular file: `kind` is what it is ("a FIFO", "a directory", …).
    case notRegularFile(kind: String)
    /// Larger than the limit, by its size or by what reading it gave.
    case tooLarge(limit: Int)
    /// `read` failed with this errno.
    case readFailed(errno: Int32)
}

/// Reads a small file a person named (a configuration file, a theme) whole,
/// never waiting and never reading without bound: only a regular file is read
/// (it is opened as ``FileIO/openRegularFile(_:_:)`` opens entry files, so a
/// FIFO with no writer is refused, not waited on, and `/dev/zero` is refused,
/// not read for ever), and at most `limit` bytes of it (a larger file is
/// refused by its size before any is read, and one that grows past `limit`
/// while being read is refused when it does).
package enum SmallFile {
    package static func contents(of path: String, limit: Int) throws(SmallFileError) -> [UInt8] {
        var info = stat()
        let fd = FileIO.openRegularFile(path, &info)
        if fd < 0 {
            let code = errno
            // openRegularFile fills `info` before it refuses a file that is not regular.
            if let kind = kind(of: info.st_mode) { throw .notRegularFile(kind: kind) }
            // A socket cannot be opened at all (ENXIO): say what it is, not the errno.
            var named = stat()
            if stat(path, &named) == 0, let kind = kind(of: named.st_mode) { throw .notRegularFile(kind: kind) }
            throw .cannotOpen(errno: code)
        }
        defer { close(fd) }
        guard info.st_size <= limit else { throw .tooLarge(limit: limit) }
        // One byte more than the limit, so that a file grown past it since
        // `fstat` is seen as too large rather than cut short.
        var bytes = [UInt8](repeating: 0, count: min(Int(info.st_size), limit) + 1)
        var total = 0
        while true {
            if total == bytes.count {
                guard bytes.count <= limit else { throw .tooLarge(limit: limit) }
                bytes.append(contentsOf: repeatElement(0, count: min(max(4096, bytes.count), limit + 1 - bytes.count)))
            }
            let n = bytes.withUnsafeMutableBytes { buffer in
                read(fd, buffer.baseAddress! + total, buffer.count - total)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .readFailed(errno: errno)
            }
            if n == 0 { break }
            total += n
        }
        bytes.removeSubrange(total...)
        return bytes
    }

    /// What a file of this mode is, if it is not a regular file; nil for a
    /// regular file and for a mode of 0 (no status was read).
    static func kind(of mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case 0, S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "a special file"
        }
    }
}
