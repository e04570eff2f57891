import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a checked delete (``FileIO/unlinkIfUnchanged(_:expected:directory:waiting:step:)``)
/// has got to; tests act at these points as another process would.
package enum CheckedDeleteStep: Sendable {
    /// The file was found holding the expected version.
    case checked
    /// The file was moved to a private name, not yet checked again there.
    case movedAside
}

/// Thin POSIX file helpers that report errno instead of Foundation errors.
enum FileIO {
    enum ReadResult {
        case bytes(Data)
        case notFound
        case failed(Int32)
    }

    /// Opens `path` for reading, refusing anything but a regular file: a plain
    /// `open` of a FIFO waits for a writer forever (a FIFO where an entry or a
    /// store's file belongs hung every read, and the disk level's start-up).
    /// -1 with `errno` set on failure: `EISDIR` for a directory, `EINVAL` for
    /// a FIFO, socket or device. `info` is the open file's status (callers
    /// need not ask again).
    static func openRegularFile(_ path: String, _ info: inout stat) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return -1 }
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            errno = code
            return -1
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            close(fd)
            errno = type == S_IFDIR ? EISDIR : EINVAL
            return -1
        }
        return fd
    }

    /// Reads a whole file; `expected` sizes the first read.
    static func readFile(_ path: String, expected: Int? = nil) -> ReadResult {
        var info = stat()
        let fd = openRegularFile(path, &info)
        if fd < 0 { return errno == ENOENT ? .notFound : .failed(errno) }
        defer { close(fd) }
        let size = expected ?? Int(info.st_size)
        // One byte more than expected: a longer file than the index says is seen.
        var data = Data(count: size + 1)
        var total = 0
        while true {
            if total == data.count { data.count += max(4096, data.count) }
            let n = data.withUnsafeMutableBytes { buffer in
                read(fd, buffer.baseAddress! + total, buffer.count - total)
            }
            if n < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if n == 0 { break }
            total += n
        }
        data.count = total
        return .bytes(data)
    }

    enum PrefixResult {
        case bytes(Data, size: Int)
        /// Gone between listing and opening (another process removed it).
        case vanished
        case unreadable
    }

    /// Reads the first `count` bytes of a file and its size.
    static func readPrefix(_ path: String, count: Int) -> PrefixResult {
        var info = stat()
        let fd = openRegularFile(path, &info)
        if fd < 0 { return errno == ENOENT ? .vanished : .unreadable }
        defer { close(fd) }
        var data = Data(count: count)
        let n = data.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, count, 0) }
        guard n >= 0 else { return .unreadable }
        data.count = n
        return .bytes(data, size: Int(info.st_size))
    }

    enum TemporaryWrite: Sendable {
        case written(path: String)
        case failed(errno: Int32)
    }

    /// Writes `bytes` to a fresh temporary file (mode 0600) in `directory`;
    /// `durable` fsyncs it. On failure nothing is left behind.
    static func writeTemporary(_ bytes: [UInt8], in directory: String, durable: Bool = false) -> TemporaryWrite {
        let temp = directory + "/" + temporaryName()
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 { return .failed(errno: errno) }
        var written = 0
        var failure: Int32? = bytes.withUnsafeBytes { buffer -> Int32? in
            while written < buffer.count {
                let n = write(fd, buffer.baseAddress! + written, buffer.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += n
            }
            return nil
        }
        if failure == nil && durable && fsync(fd) != 0 { failure = errno }
        if close(fd) != 0 && failure == nil { failure = errno }
        if let failure {
            unlink(temp)
            return .failed(errno: failure)
        }
        return .written(path: temp)
    }

    /// Writes `bytes` to a fresh temporary file in `directory` and renames it
    /// over `path`: a reader sees the old file or the new one, never half.
    /// `durable` fsyncs the file before the rename and the directory after it.
    /// On failure the temporary file is removed and errno returned.
    static func writeAtomically(_ bytes: [UInt8], to path: String, directory: String, durable: Bool = false) -> Int32? {
        let temp: String
        switch writeTemporary(bytes, in: directory, durable: durable) {
        case .failed(let code): return code
        case .written(let path): temp = path
        }
        if rename(temp, path) != 0 {
            let code = errno
            unlink(temp)
            return code
        }
        return durable ? syncDirectory(directory) : nil
    }

    /// fsyncs a directory, so a rename in it survives a crash; returns errno on failure.
    static func syncDirectory(_ directory: String) -> Int32? {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd < 0 { return errno }
        defer { close(fd) }
        return fsync(fd) == 0 ? nil : errno
    }

    enum UnlinkOutcome: Equatable {
        /// The file held the expected version and is gone.
        case deleted
        /// Nothing was there.
        case gone
        /// Another version is there now; it was left (or put back) in place.
        case replaced
        /// It could not be checked or moved, or the delete lock was taken and
        /// the caller would not wait; it was left in place.
        case failed
    }

    /// Deletes the file at `path` only if it holds `expected`.
    ///
    /// The caller keeps its own process's writers of `path` out meanwhile. The
    /// file is checked, renamed to a private temporary name, and checked
    /// again there: if another process renamed a new version in between, that
    /// version is put back (unless a still newer one is already in place).
    /// From the rename to the put-back it holds the directory's delete lock
    /// exclusively (``withDeleteLock(_:exclusive:waiting:_:)``): a remove or clear by
    /// another process waits, so the version put back is never one that
    /// process has removed meanwhile. With `waiting` false, a lock another
    /// process holds leaves the file in place (`.failed`) instead of
    /// blocking the thread (a read that met an expired or corrupt entry: it
    /// reads as a miss either way, and a later read or sweep deletes it).
    static func unlinkIfUnchanged(
        _ path: String, expected: EntryFingerprint, directory: String, waiting: Bool = true,
        step: ((CheckedDeleteStep) -> Void)? = nil
    ) -> UnlinkOutcome {
        switch FileIO.readPrefix(path, count: DiskEntryHeader.size) {
        case .vanished: return .gone
        case .unreadable: return .failed
        case .bytes(let prefix, let size):
            guard EntryFingerprint(prefix: prefix, size: size) == expected else { return .replaced }
        }
        step?(.checked)
        return withDeleteLock(directory, exclusive: true, waiting: waiting) {
            moveAsideAndUnlink(path, expected: expected, directory: directory, step: step)
        } ?? .failed
    }

    private static func moveAsideAndUnlink(
        _ path: String, expected: EntryFingerprint, directory: String, step: ((CheckedDeleteStep) -> Void)?
    ) -> UnlinkOutcome {
        let trash = directory + "/" + temporaryName()
        if rename(path, trash) != 0 { return errno == ENOENT ? .gone : .failed }
        step?(.movedAside)
        if EntryFingerprint.ofFile(trash) == expected {
            unlink(trash)
            return .deleted
        }
        // Another process replaced it between the check and the rename: put
        // its version back, unless an even newer one has arrived since.
        if link(trash, path) == 0 || errno == EEXIST {
            unlink(trash)
        } else if access(path, F_OK) != 0 && errno == ENOENT {
            rename(trash, path)
        } else {
            unlink(trash)
        }
        return .replaced
    }

    /// `.tmp-<pid>-<random>`: the pid lets a later process tell a dead
    /// writer's leftovers from a live writer's file in progress.
    static func temporaryName() -> String {
        ".tmp-\(getpid())-\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
    }

    /// The pid in a temporary file's name, if it is one.
    static func temporaryOwner(_ name: String) -> pid_t? {
        guard name.hasPrefix(".tmp-") else { return nil }
        let parts = name.split(separator: "-")
        return parts.count >= 3 ? pid_t(parts[1]) : nil
    }

    static func processIsAlive(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    /// Overwrites 8 bytes at `offset` (the header's last-access field).
    static func writeInt64(_ value: Int64, at offset: Int64, path: String) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        var little = value.littleEndian
        _ = withUnsafeBytes(of: &little) { pwrite(fd, $0.baseAddress!, 8, off_t(offset)) }
        close(fd)
    }

    /// Creates `path` and its missing parents (mode 0700: cached data is the
    /// user's own); returns errno on failure. Existing directories keep their mode.
    static func makeDirectory(_ path: String) -> Int32? {
        var current = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            current += "/" + component
            if mkdir(current, 0o700) != 0 && errno != EEXIST { return errno }
        }
        var info = stat()
        guard stat(path, &info) == 0 else { return errno }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return ENOTDIR }
        return access(path, W_OK | X_OK) == 0 ? nil : errno
    }

    /// What ``makeDirectory(_:)`` would fail with (an errno), found
    /// without creating anything: the path, or its nearest existing
    /// ancestor, must be a directory this process may write.
    static func checkDirectory(_ path: String) -> Int32? {
        var current = path
        while true {
            var info = stat()
            if stat(current, &info) == 0 {
                guard (info.st_mode & S_IFMT) == S_IFDIR else { return ENOTDIR }
                return access(current, W_OK | X_OK) == 0 ? nil : errno
            }
            guard errno == ENOENT else { return errno }
            let parent = (current as NSString).deletingLastPathComponent
            if parent == current || parent.isEmpty { return ENOENT }
            current = parent
        }
    }

    /// Whether `code`, what ``makeDirectory(_:)`` or ``checkDirectory(_:)``
    /// failed with for `path`, says only that the directory there may not be
    /// written (a read-only filesystem, permissions): it exists and can be
    /// listed and read.
    static func isReadOnlyDirectory(_ path: String, failure code: Int32) -> Bool {
        (code == EROFS || code == EACCES) && directoryExists(path) && access(path, R_OK | X_OK) == 0
    }

    /// Whether `path` exists as a directory.
    static func directoryExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    static func listDirectory(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// What identifies one version of a file replaced by rename: device,
    /// inode, size and modification time. `nil` when there is no file.
    struct Identity: Equatable, Sendable {
        let device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int
    }

    static func identity(_ path: String) -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                        seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
    }
}
