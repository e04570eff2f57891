#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One version of a file, kept open: its identity (device, inode, size,
/// modification time) as it was opened, and a descriptor that stops the
/// file system from handing its inode to another file while it is held.
///
/// A soft copy validated by identity alone can be fooled: ext4 gives a freed
/// inode to the next file created, and kernels before 6.13 stamp files from
/// a coarse clock, so two quick same-size rewrites can produce a file that
/// looks like the version read. Holding this, the version read cannot share
/// an inode with any later one.
final class OpenFileVersion: Sendable {
    let identity: FileIO.Identity
    private let descriptor: CInt

    /// `nil` if the file cannot be opened (missing, unreadable).
    init?(path: String) {
        var info = stat()
        let fd = FileIO.openRegularFile(path, &info)
        guard fd >= 0 else { return nil }
        descriptor = fd
        identity = FileIO.Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                                   seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
    }

    deinit { close(descriptor) }
}
