#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Advisory locks (`flock`) between processes sharing a directory.
///
/// Every lock is taken on a file opened by path, and the path is checked
/// again once the lock is held: a directory or lock file deleted and
/// recreated between the `open` and the `flock` would otherwise give two
/// processes "the" lock on two different files, each sure it excludes the
/// other. A lock found on a replaced file is dropped and the new file locked.
extension FileIO {
    /// An exclusive advisory lock on `<directory>/.lock` held while `body` runs.
    static func withDirectoryLock<T>(_ directory: String, _ body: () throws -> T) rethrows -> T {
        try withFileLock(directory + "/.lock", body)
    }

    /// An exclusive advisory lock (`flock`) on the file at `lockPath` (created
    /// 0600) held while `body` runs; other processes and other open files of
    /// this one wait. If the lock file cannot be opened, `body` runs unlocked.
    static func withFileLock<T>(_ lockPath: String, _ body: () throws -> T) rethrows -> T {
        try withLock(lockPath, flags: O_RDWR | O_CREAT, body)!
    }

    /// The lock on `<directory>/.delete-lock` between a checked delete
    /// (`exclusive`), which may put another process's version back, and the
    /// plain deletes of removes and clears (shared: they do not wait for one
    /// another), which must not have that version put back after them.
    /// Holders keep it for one file at a time. `nil` (and `body` not run)
    /// when `waiting` is false and another holder conflicts.
    static func withDeleteLock<T>(_ directory: String, exclusive: Bool, waiting: Bool = true,
                                  _ body: () throws -> T) rethrows -> T? {
        try withLock(directory + "/.delete-lock", flags: O_RDWR | O_CREAT,
                     operation: exclusive ? LOCK_EX : LOCK_SH, waiting: waiting, body)
    }

    /// An exclusive advisory lock on the directory itself (no lock file).
    static func withLockOnDirectory<T>(_ directory: String, _ body: () throws -> T) rethrows -> T {
        try withLock(directory, flags: O_RDONLY | O_DIRECTORY, body)!
    }

    /// Runs `body` holding `operation` on the file at `path`, opened with
    /// `flags`; if it cannot be opened, `body` runs unlocked. `nil` (and
    /// `body` not run) when `waiting` is false and the lock is not had (held elsewhere, or not lockable).
    /// `afterOpen` runs between the open and the lock (tests: the file is
    /// replaced there, as another process could).
    static func withLock<T>(_ path: String, flags: Int32, operation: Int32 = LOCK_EX, waiting: Bool = true,
                            afterOpen: (() -> Void)? = nil, _ body: () throws -> T) rethrows -> T? {
        var afterOpen = afterOpen
        // Bounded only against a path replaced on every attempt, forever.
        for attempt in 0..<64 {
            let fd = open(path, flags | O_CLOEXEC, 0o600)
            guard fd >= 0 else { return try body() }
            afterOpen?()
            afterOpen = nil
            var result: Int32
            repeat { result = flock(fd, waiting ? operation : operation | LOCK_NB) } while result != 0 && errno == EINTR
            if result != 0 && !waiting {
                // Held by another, or not lockable (`ENOLCK` on some network
                // file systems): a caller that would not wait does not run
                // `body` unlocked either.
                close(fd)
                return nil
            }
            // (A waiting lock that fails runs `body` unlocked, as a file that
            // cannot be opened does.)
            if result == 0 && !isStillAt(path, fd) && attempt < 63 {
                flock(fd, LOCK_UN)
                close(fd)
                continue
            }
            defer {
                flock(fd, LOCK_UN)
                close(fd)
            }
            return try body()
        }
        return try body()  // not reached: the last attempt runs `body`
    }

    /// Whether `path` still names the file open as `fd` (same device and inode).
    static func isStillAt(_ path: String, _ fd: Int32) -> Bool {
        var held = stat(), current = stat()
        guard fstat(fd, &held) == 0, stat(path, &current) == 0 else { return false }
        return held.st_dev == current.st_dev && held.st_ino == current.st_ino
    }
}
